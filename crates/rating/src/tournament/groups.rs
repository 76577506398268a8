//! Group round robins feeding a final (分组循环制, 11.3).
//!
//! The entrants, in configuration order (the seeding: 11.3 seeds by rating
//! or results, which is the order of the participant list), are dealt into
//! the groups in a serpentine (seed 1 to group 1, seed 2 to group 2, …, then
//! back from the last group), so every group gets one seed of each pot. 11.3
//! does not say how seeds are spread; the serpentine is the simplification
//! we chose. Every group plays a round robin (Berger tables, 13.1) in the same
//! rounds; the top `qualifiers` of each group by the 15.1 ranking then play a
//! round robin final, numbered group winners first (group 1's winner is
//! Berger number 1, group 2's number 2, …, then the runners-up). Results of
//! the group stage are not carried into the final: 11.3 says nothing of it.

use serde::{Deserialize, Serialize};

use super::standings::compute_over;
use super::{
    Bye, GameEntry, GameKind, PlayerId, Schedule, Standing, Standings, TieBreak, Tournament,
    TournamentError, round_robin_schedule,
};

#[derive(Debug, Clone)]
pub(crate) struct GroupsState {
    groups: Vec<Vec<PlayerId>>,
    schedules: Vec<Schedule>,
    group_rounds: u32,
    qualifiers: usize,
    final_cycles: u32,
    finalists: Option<Vec<PlayerId>>,
    final_schedule: Schedule,
}

/// The stages of an 11.3 event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupsSummary {
    /// Members of each group, in seeding order.
    pub members: Vec<Vec<PlayerId>>,
    /// Each group's standings over its own games (15.1).
    pub groups: Vec<Standings>,
    /// The final's standings over the final's games, once drawn.
    pub final_standings: Option<Standings>,
    /// Finalists in the final's order, then the others by group place (the
    /// same place in different groups shares a rank: the articles do not
    /// compare them).
    pub overall: Standings,
}

impl GroupsState {
    pub(crate) fn new(
        n: usize,
        groups: u32,
        qualifiers: u32,
        cycles: u32,
        final_cycles: u32,
    ) -> Result<GroupsState, TournamentError> {
        let bad = |why: String| Err(TournamentError::BadGroups { why });
        let g = groups as usize;
        if g < 2 {
            return bad(format!("11.3 needs at least 2 groups, got {groups}"));
        }
        if n < 2 * g {
            return bad(format!(
                "{n} participants cannot fill {groups} groups of at least 2"
            ));
        }
        let smallest = n / g;
        if qualifiers == 0 || qualifiers as usize > smallest {
            return bad(format!(
                "qualifiers must be 1 to {smallest} (the smallest group), got {qualifiers}"
            ));
        }
        for (key, c) in [("cycles", cycles), ("final_cycles", final_cycles)] {
            if !(1..=2).contains(&c) {
                return bad(format!("{key} must be 1 or 2, got {c}"));
            }
        }
        let mut members = vec![Vec::new(); g];
        for seed in 0..n {
            let (pot, pos) = (seed / g, seed % g);
            let group = if pot % 2 == 0 { pos } else { g - 1 - pos };
            members[group].push(seed);
        }
        let schedules: Vec<Schedule> = members
            .iter()
            .map(|m| round_robin_schedule(m, cycles))
            .collect();
        let group_rounds = schedules.iter().map(Vec::len).max().unwrap_or(0) as u32;
        Ok(GroupsState {
            groups: members,
            schedules,
            group_rounds,
            qualifiers: qualifiers as usize,
            final_cycles,
            finalists: None,
            final_schedule: Vec::new(),
        })
    }

    /// Whether round `round` is the first of the final and it is not drawn.
    pub(crate) fn needs_final(&self, round: u32) -> bool {
        self.finalists.is_none() && round > self.group_rounds
    }

    /// Draws the final among `finalists` (in Berger-number order).
    pub(crate) fn set_final(&mut self, finalists: Vec<PlayerId>) {
        self.final_schedule = round_robin_schedule(&finalists, self.final_cycles);
        self.finalists = Some(finalists);
    }

    pub(crate) fn is_finished(&self, round: u32) -> bool {
        self.finalists.is_some()
            && round as usize >= self.group_rounds as usize + self.final_schedule.len()
    }

    /// The boards and byes of round `round`.
    pub(crate) fn next_round(
        &self,
        round: u32,
    ) -> (Vec<(PlayerId, PlayerId, GameKind)>, Vec<PlayerId>) {
        let mut pairs = Vec::new();
        let mut byes = Vec::new();
        let mut take = |schedule: &Schedule, index: usize| {
            if let Some(boards) = schedule.get(index) {
                for &(red, black) in boards {
                    match black {
                        Some(black) => pairs.push((red, black, GameKind::Regular)),
                        None => byes.push(red),
                    }
                }
            }
        };
        if round <= self.group_rounds {
            for s in &self.schedules {
                take(s, round as usize - 1);
            }
        } else {
            take(
                &self.final_schedule,
                (round - self.group_rounds) as usize - 1,
            );
        }
        (pairs, byes)
    }

    /// Standings of group `g` over the group stage.
    fn group_standings(&self, t: &Tournament, g: usize) -> Standings {
        let members = &self.groups[g];
        let games: Vec<&GameEntry> = t
            .games()
            .iter()
            .filter(|e| e.pairing.round <= self.group_rounds && members.contains(&e.pairing.red))
            .collect();
        let byes: Vec<&Bye> = t
            .byes()
            .iter()
            .filter(|b| b.round <= self.group_rounds && members.contains(&b.player))
            .collect();
        compute_over(
            t,
            members,
            &games,
            &byes,
            0,
            &TieBreak::defaults_for(&t.config().format),
        )
    }

    /// The finalists, group winners first, from the finished group stage.
    pub(crate) fn qualifiers(&self, t: &Tournament) -> Vec<PlayerId> {
        let tables: Vec<Standings> = (0..self.groups.len())
            .map(|g| self.group_standings(t, g))
            .collect();
        (0..self.qualifiers)
            .flat_map(|place| tables.iter().map(move |s| s.rows[place].player))
            .collect()
    }

    pub(crate) fn summary(&self, t: &Tournament) -> GroupsSummary {
        let tiebreaks = TieBreak::defaults_for(&t.config().format);
        let groups: Vec<Standings> = (0..self.groups.len())
            .map(|g| self.group_standings(t, g))
            .collect();
        let final_standings = self.finalists.as_ref().map(|finalists| {
            let games: Vec<&GameEntry> = t
                .games()
                .iter()
                .filter(|e| e.pairing.round > self.group_rounds)
                .collect();
            let byes: Vec<&Bye> = t
                .byes()
                .iter()
                .filter(|b| b.round > self.group_rounds)
                .collect();
            compute_over(t, finalists, &games, &byes, 0, &tiebreaks)
        });
        let mut rows: Vec<Standing> = final_standings
            .as_ref()
            .map(|s| s.rows.clone())
            .unwrap_or_default();
        let first_place = if final_standings.is_some() {
            self.qualifiers
        } else {
            0
        };
        let longest = groups.iter().map(|s| s.rows.len()).max().unwrap_or(0);
        for place in first_place..longest {
            let rank = rows.len() + 1;
            for s in &groups {
                if let Some(row) = s.rows.get(place) {
                    rows.push(Standing {
                        rank,
                        ..row.clone()
                    });
                }
            }
        }
        GroupsSummary {
            members: self.groups.clone(),
            groups,
            final_standings,
            overall: Standings {
                primary: super::Primary::Points,
                tiebreaks,
                rows,
            },
        }
    }
}
