//! Which player an anchor of the strength scale ([`xq_rating::strength`]) is.
//!
//! The scale keeps each anchor by its player specification (`alphabeta:depth=1`,
//! `fsf:skill=0`), while games and match results name players by the names they play
//! under (`alphabeta-d1`, `fsf-skill0`), and a user may write a specification in
//! another form (`alphabeta:depth=1,hash=16`). Telling that these all name one player
//! takes the specification grammar of [`crate::spec`], so the lookup lives here, with
//! the players, as an extension of the rating crate's table.

use xq_rating::{
    stats::{AnchorGames, AnchoredRating, StatsError},
    strength::{self, Anchor, AnchorTable},
};

use crate::spec::PlayerSpec;

/// Finds anchors by the names players go by, and rates from results named so.
pub trait AnchorLookup {
    /// The anchor that `player` names: a specification (`alphabeta:depth=1`) or a
    /// player's name in games (`alphabeta-d1`, `fsf-skill0`, `random`).
    fn get(&self, player: &str) -> Option<&Anchor>;

    /// Rates a player from its results against anchors named in `results`
    /// (`(anchor, wins, draws, losses)`); results against players that are not
    /// anchors are ignored.
    ///
    /// # Errors
    /// No game against any anchor.
    fn rate<'a>(
        &self,
        results: impl IntoIterator<Item = (&'a str, u64, u64, u64)>,
    ) -> Result<AnchoredRating, StatsError>;
}

impl AnchorLookup for AnchorTable {
    fn get(&self, player: &str) -> Option<&Anchor> {
        let wanted = canonical(player);
        self.anchors
            .iter()
            .find(|a| canonical(&a.spec) == wanted || player_name(&a.spec) == player)
    }

    fn rate<'a>(
        &self,
        results: impl IntoIterator<Item = (&'a str, u64, u64, u64)>,
    ) -> Result<AnchoredRating, StatsError> {
        let games: Vec<AnchorGames> = results
            .into_iter()
            .filter_map(|(name, wins, draws, losses)| {
                self.get(name).map(|a| AnchorGames {
                    anchor: a.spec.clone(),
                    anchor_elo: a.elo,
                    wins,
                    draws,
                    losses,
                })
            })
            .collect();
        strength::rate(&games)
    }
}

/// A specification in its one canonical text, or the text itself when it does not parse.
fn canonical(text: &str) -> String {
    text.parse::<PlayerSpec>()
        .map_or_else(|_| text.trim().to_owned(), |s| s.to_string())
}

/// The name a built-in or Fairy-Stockfish anchor plays under in PGN and match results.
pub fn player_name(spec: &str) -> String {
    match spec.parse::<PlayerSpec>() {
        Ok(PlayerSpec::AlphaBeta { depth, .. }) => format!("alphabeta-d{depth}"),
        Ok(PlayerSpec::Engine(cfg)) => cfg.name.unwrap_or_else(|| spec.to_owned()),
        Ok(PlayerSpec::Random) => "random".into(),
        Ok(PlayerSpec::Greedy) => "greedy".into(),
        _ => spec.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_anchor_is_a_player_built_without_a_network() {
        for a in &AnchorTable::builtin().anchors {
            let spec: PlayerSpec = a.spec.parse().unwrap();
            assert!(!spec.needs_network_backend(), "{}", a.spec);
        }
    }

    #[test]
    fn anchors_are_found_by_spec_or_by_player_name() {
        let t = AnchorTable::builtin();
        let ab1 = t.get("alphabeta:depth=1").unwrap();
        assert_eq!(t.get("alphabeta-d1"), Some(ab1));
        assert_eq!(t.get("alphabeta:depth=1,hash=16"), Some(ab1));
        assert_eq!(t.get("fsf-skill0").unwrap().spec, "fsf:skill=0");
        assert!(t.get("alphabeta:depth=7").is_none());
        assert!(t.get("net:x.json").is_none());
    }

    #[test]
    fn rating_ignores_players_that_are_not_anchors() {
        let t = AnchorTable::builtin();
        let with = t
            .rate([("greedy", 10, 0, 10), ("someone", 20, 0, 0)])
            .unwrap();
        let without = t.rate([("greedy", 10, 0, 10)]).unwrap();
        assert_eq!(with, without);
        assert!((with.elo - t.get("greedy").unwrap().elo).abs() < 1e-6);
        assert!(t.rate([("someone", 1, 0, 0)]).is_err());
    }
}
