//! The in-memory form of a chunk: games (start position and moves) and the position
//! records that point into them.
//!
//! A record names its position as `(game, ply)`: the position after the first `ply`
//! moves of game `game`. Storing the game once and pointing into it is what makes the
//! history the encoder needs (the previous positions, repetition counts) exact and
//! cheap: it is replayed from the game, never approximated.

use xq_core::{Color, Move, Position};

/// Win, draw or loss from one side's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Wdl {
    Win,
    Draw,
    Loss,
}

impl Wdl {
    /// The same result from the other side.
    #[must_use]
    pub const fn flip(self) -> Wdl {
        match self {
            Wdl::Win => Wdl::Loss,
            Wdl::Draw => Wdl::Draw,
            Wdl::Loss => Wdl::Win,
        }
    }

    /// Index into a `[win, draw, loss]` vector.
    pub const fn index(self) -> usize {
        match self {
            Wdl::Win => 0,
            Wdl::Draw => 1,
            Wdl::Loss => 2,
        }
    }

    /// The one-hot `[win, draw, loss]` vector.
    pub const fn one_hot(self) -> [f32; 3] {
        match self {
            Wdl::Win => [1.0, 0.0, 0.0],
            Wdl::Draw => [0.0, 1.0, 0.0],
            Wdl::Loss => [0.0, 0.0, 1.0],
        }
    }
}

/// How a game ended, from Red's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    RedWins,
    Draw,
    BlackWins,
}

impl Outcome {
    /// The outcome of a game won by `winner`, or drawn (`None`).
    pub const fn of_winner(winner: Option<Color>) -> Outcome {
        match winner {
            Some(Color::Red) => Outcome::RedWins,
            Some(Color::Black) => Outcome::BlackWins,
            None => Outcome::Draw,
        }
    }

    /// The result for `side`.
    pub const fn for_side(self, side: Color) -> Wdl {
        let red = match self {
            Outcome::RedWins => Wdl::Win,
            Outcome::Draw => Wdl::Draw,
            Outcome::BlackWins => Wdl::Loss,
        };
        match side {
            Color::Red => red,
            Color::Black => red.flip(),
        }
    }

    /// The PGN result token: `1-0`, `1/2-1/2`, `0-1`.
    pub const fn pgn(self) -> &'static str {
        match self {
            Outcome::RedWins => "1-0",
            Outcome::Draw => "1/2-1/2",
            Outcome::BlackWins => "0-1",
        }
    }
}

/// One game: where it started and the moves played. Records point into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameRecord {
    pub start: Position,
    pub moves: Vec<Move>,
}

impl GameRecord {
    /// The position after the first `ply` moves; `None` if `ply` is past the end.
    ///
    /// The moves were checked legal when the chunk was built or read, so replaying
    /// them cannot fail.
    pub fn position_at(&self, ply: usize) -> Option<Position> {
        let moves = self.moves.get(..ply)?;
        let mut pos = self.start.clone();
        for &m in moves {
            pos.play_unchecked(m);
        }
        Some(pos)
    }
}

/// One entry of a policy target: a legal move and its share, quantized to `u16`.
///
/// Shares are relative: the entries of a record are normalized by their sum when a
/// batch is built. [`quantize_policy`] scales the largest entry to 65535, which keeps
/// about 5 significant digits for the moves that matter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PolicyEntry {
    pub mv: Move,
    pub weight: u16,
}

/// Quantizes a policy (visit counts, probabilities, any non-negative weights) so that
/// its largest entry becomes 65535; entries that round to zero are dropped.
/// Returns an empty vector when nothing is positive (or a weight is not finite).
pub fn quantize_policy(policy: &[(Move, f32)]) -> Vec<PolicyEntry> {
    if policy.iter().any(|&(_, w)| !w.is_finite() || w < 0.0) {
        return Vec::new();
    }
    let max = policy.iter().fold(0.0f32, |a, &(_, w)| a.max(w));
    if max <= 0.0 {
        return Vec::new();
    }
    policy
        .iter()
        .filter_map(|&(mv, w)| {
            let q = (f64::from(w) / f64::from(max) * 65535.0).round() as u16;
            (q > 0).then_some(PolicyEntry { mv, weight: q })
        })
        .collect()
}

/// One training position: which position, and its targets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PositionRecord {
    /// Index of the game in the chunk.
    pub game: u32,
    /// Moves of that game played before this position (0 = the game's start).
    pub ply: u16,
    /// Final result of the game for the side to move here; `None` when not known
    /// (supervised games without a result): such records carry no value target.
    pub result: Option<Wdl>,
    /// Plies from this position to the end of the game.
    pub plies_left: u16,
    /// Training weight (playout-cap randomization, policy target pruning, surprise
    /// weighting); 1.0 is a normal sample, 0.0 one that trains nothing.
    pub weight: f32,
    /// The search's root value as `[win, draw, loss]` for the side to move; all zeros
    /// when there was no search (supervised data).
    pub root_wdl: [f32; 3],
    /// Where this record's policy entries start in [`Chunk::policy`].
    pub policy_start: u32,
    /// How many policy entries it has (at least one).
    pub policy_len: u16,
}

/// The fields of a record that the caller chooses; [`Chunk::add_record`] fills in
/// where the policy lives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewRecord {
    pub game: u32,
    pub ply: u16,
    pub result: Option<Wdl>,
    pub plies_left: u16,
    pub weight: f32,
    pub root_wdl: [f32; 3],
}

/// The search targets of one ply of a finished game, for
/// [`Chunk::add_game_with_targets`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlyTarget<'a> {
    /// Moves played before the position (0 = the game's start).
    pub ply: u16,
    /// The visit distribution (see [`quantize_policy`]).
    pub policy: &'a [PolicyEntry],
    /// Root value `[win, draw, loss]` for the side to move (zeros without a search).
    pub root_wdl: [f32; 3],
    /// Training weight (1.0 normal; e.g. 0 for cheap playout-cap searches).
    pub weight: f32,
}

/// Provenance written in every chunk header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkMeta {
    /// `xq_nn::encode::ENCODING_VERSION` of the network that produced the data. Chunks
    /// store positions and moves rather than planes or indices, so data stays usable
    /// when the encoding changes; the number is kept for provenance and filtering.
    pub encoding_version: u32,
    /// `xq_nn::policy::POLICY_INDEX_VERSION` at writing time, for the same reason.
    pub policy_index_version: u32,
    /// Who wrote the chunk, e.g. `xqz selfplay 0.1 model=run1-s120000`.
    pub creator: String,
    /// The seed of the writer's RNG, so a chunk can be traced to the run that made it.
    pub seed: u64,
}

/// A chunk: games, the records that point into them, and their policy entries.
///
/// Policies are stored flat (`policy`), each record naming its slice, so a window of
/// millions of records costs no allocation per record.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    pub meta: ChunkMeta,
    pub games: Vec<GameRecord>,
    pub records: Vec<PositionRecord>,
    pub policy: Vec<PolicyEntry>,
}

/// A record or game that cannot be part of a chunk.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RecordError {
    #[error("record {record}: game index {game} out of range ({games} games)")]
    NoSuchGame {
        record: usize,
        game: u32,
        games: usize,
    },
    #[error("record {record}: ply {ply} is past the end of game {game} ({len} moves)")]
    PlyPastEnd {
        record: usize,
        game: u32,
        ply: u16,
        len: usize,
    },
    #[error("game {game}: move {ply} ({mv}) is illegal in {fen}")]
    IllegalGameMove {
        game: usize,
        ply: usize,
        mv: Move,
        fen: String,
    },
    #[error("game {game} has {len} moves (at most 65535)")]
    GameTooLong { game: usize, len: usize },
    #[error("record {record}: policy move {mv} is illegal in {fen}")]
    IllegalPolicyMove {
        record: usize,
        mv: Move,
        fen: String,
    },
    #[error("record {record}: policy move {mv} appears twice")]
    DuplicatePolicyMove { record: usize, mv: Move },
    #[error("record {record}: empty policy target (or all weights zero)")]
    EmptyPolicy { record: usize },
    #[error("record {record}: policy has {len} entries (at most 65535)")]
    PolicyTooLong { record: usize, len: usize },
    #[error("record {record}: policy slice {start}+{len} outside the {total} stored entries")]
    PolicyOutOfRange {
        record: usize,
        start: u32,
        len: u16,
        total: usize,
    },
    #[error("record {record}: weight {weight} is not a finite non-negative number")]
    BadWeight { record: usize, weight: f32 },
    #[error("record {record}: root value {wdl:?} has a non-finite or negative entry")]
    BadRootValue { record: usize, wdl: [f32; 3] },
    #[error("chunk too large: {what}")]
    TooLarge { what: String },
}

impl Chunk {
    /// An empty chunk.
    pub fn new(meta: ChunkMeta) -> Chunk {
        Chunk {
            meta,
            games: Vec::new(),
            records: Vec::new(),
            policy: Vec::new(),
        }
    }

    /// Adds a game after checking its moves are legal; returns its index.
    ///
    /// # Errors
    /// The first illegal move, or a game too long for the format.
    pub fn add_game(&mut self, start: Position, moves: Vec<Move>) -> Result<u32, RecordError> {
        let game = GameRecord { start, moves };
        check_game(self.games.len(), &game)?;
        let idx = u32::try_from(self.games.len()).map_err(|_| RecordError::TooLarge {
            what: "more than 2^32 games".into(),
        })?;
        self.games.push(game);
        Ok(idx)
    }

    /// Adds a record and its policy entries after checking them against the game.
    ///
    /// # Errors
    /// A bad game index or ply, an empty policy, a policy move that is not legal in
    /// the record's position, a duplicate move, or a non-finite weight or value.
    pub fn add_record(
        &mut self,
        rec: NewRecord,
        policy: &[PolicyEntry],
    ) -> Result<(), RecordError> {
        let record = self.records.len();
        let policy_len = u16::try_from(policy.len()).map_err(|_| RecordError::PolicyTooLong {
            record,
            len: policy.len(),
        })?;
        let policy_start = u32::try_from(self.policy.len()).map_err(|_| RecordError::TooLarge {
            what: "more than 2^32 policy entries".into(),
        })?;
        let full = PositionRecord {
            game: rec.game,
            ply: rec.ply,
            result: rec.result,
            plies_left: rec.plies_left,
            weight: rec.weight,
            root_wdl: rec.root_wdl,
            policy_start,
            policy_len,
        };
        check_record(record, &full, &self.games, policy)?;
        self.policy.extend_from_slice(policy);
        self.records.push(full);
        Ok(())
    }

    /// Adds a finished game with a record per target, replaying the game once. The
    /// result for each record's side to move follows from `outcome` (`None`: no value
    /// target) and plies left from the game's length. All or nothing: on error the
    /// chunk is left as it was.
    ///
    /// # Errors
    /// As [`Chunk::add_game`] and [`Chunk::add_record`].
    pub fn add_game_with_targets(
        &mut self,
        start: Position,
        moves: Vec<Move>,
        outcome: Option<Outcome>,
        targets: &[PlyTarget<'_>],
    ) -> Result<u32, RecordError> {
        let (games, records, policy) = (self.games.len(), self.records.len(), self.policy.len());
        let result = self.add_game_targets_inner(start, moves, outcome, targets);
        if result.is_err() {
            self.games.truncate(games);
            self.records.truncate(records);
            self.policy.truncate(policy);
        }
        result
    }

    fn add_game_targets_inner(
        &mut self,
        start: Position,
        moves: Vec<Move>,
        outcome: Option<Outcome>,
        targets: &[PlyTarget<'_>],
    ) -> Result<u32, RecordError> {
        let game = self.add_game(start, moves)?;
        let mut order: Vec<usize> = (0..targets.len()).collect();
        order.sort_by_key(|&i| targets[i].ply);
        let g = &self.games[game as usize];
        let n = g.moves.len();
        let mut pos = g.start.clone();
        let mut at = 0;
        let mut staged = Vec::with_capacity(targets.len());
        for i in order {
            let t = &targets[i];
            let record = self.records.len() + staged.len();
            let ply = usize::from(t.ply);
            if ply > n {
                return Err(RecordError::PlyPastEnd {
                    record,
                    game,
                    ply: t.ply,
                    len: n,
                });
            }
            while at < ply {
                pos.play_unchecked(g.moves[at]);
                at += 1;
            }
            let policy_len =
                u16::try_from(t.policy.len()).map_err(|_| RecordError::PolicyTooLong {
                    record,
                    len: t.policy.len(),
                })?;
            let rec = PositionRecord {
                game,
                ply: t.ply,
                result: outcome.map(|o| o.for_side(pos.turn())),
                plies_left: (n - ply) as u16,
                weight: t.weight,
                root_wdl: t.root_wdl,
                policy_start: 0,
                policy_len,
            };
            check_record_at(record, &rec, &pos, t.policy)?;
            staged.push((rec, t.policy));
        }
        for (mut rec, policy) in staged {
            rec.policy_start =
                u32::try_from(self.policy.len()).map_err(|_| RecordError::TooLarge {
                    what: "more than 2^32 policy entries".into(),
                })?;
            self.policy.extend_from_slice(policy);
            self.records.push(rec);
        }
        Ok(game)
    }

    /// The policy entries of a record.
    ///
    /// # Panics
    /// If the record's slice is outside `self.policy` (it never is for a record of a
    /// validated chunk).
    pub fn policy_of(&self, rec: &PositionRecord) -> &[PolicyEntry] {
        let start = rec.policy_start as usize;
        &self.policy[start..start + rec.policy_len as usize]
    }

    /// Appends `other`'s games, records and policies (compaction merges old chunks
    /// this way); records keep pointing at their own games and policies.
    ///
    /// # Errors
    /// When the merged chunk would exceed the format's 2^32 games or policy entries.
    pub fn append(&mut self, other: &Chunk) -> Result<(), RecordError> {
        let too_large = |what: &str| RecordError::TooLarge { what: what.into() };
        let games =
            u32::try_from(self.games.len()).map_err(|_| too_large("more than 2^32 games"))?;
        let policy = u32::try_from(self.policy.len())
            .map_err(|_| too_large("more than 2^32 policy entries"))?;
        u32::try_from(self.games.len() + other.games.len())
            .map_err(|_| too_large("more than 2^32 games"))?;
        u32::try_from(self.policy.len() + other.policy.len())
            .map_err(|_| too_large("more than 2^32 policy entries"))?;
        self.games.extend(other.games.iter().cloned());
        self.policy.extend_from_slice(&other.policy);
        self.records
            .extend(other.records.iter().map(|r| PositionRecord {
                game: r.game + games,
                policy_start: r.policy_start + policy,
                ..*r
            }));
        Ok(())
    }

    /// Checks everything the format cannot express by construction: every game legal,
    /// every record pointing at a real position, every policy move legal there and
    /// every number finite. The reader runs this on every chunk it loads, so batch
    /// assembly can replay games without checks.
    ///
    /// # Errors
    /// The first problem found.
    pub fn validate(&self) -> Result<(), RecordError> {
        for (i, game) in self.games.iter().enumerate() {
            check_game(i, game)?;
        }
        // Records are checked game by game in ply order, so each game is replayed once
        // rather than once per record.
        let mut order: Vec<usize> = (0..self.records.len()).collect();
        order.sort_by_key(|&i| (self.records[i].game, self.records[i].ply));
        let mut current: Option<(u32, usize, Position)> = None;
        for i in order {
            let rec = &self.records[i];
            let (start, len) = (rec.policy_start as usize, rec.policy_len as usize);
            let Some(policy) = self.policy.get(start..start + len) else {
                return Err(RecordError::PolicyOutOfRange {
                    record: i,
                    start: rec.policy_start,
                    len: rec.policy_len,
                    total: self.policy.len(),
                });
            };
            let game = game_of(i, rec, &self.games)?;
            let ply = usize::from(rec.ply);
            let (mut at, mut pos) = match current.take() {
                Some((g, at, pos)) if g == rec.game => (at, pos),
                _ => (0, game.start.clone()),
            };
            while at < ply {
                pos.play_unchecked(game.moves[at]);
                at += 1;
            }
            check_record_at(i, rec, &pos, policy)?;
            current = Some((rec.game, at, pos));
        }
        Ok(())
    }
}

fn check_game(index: usize, game: &GameRecord) -> Result<(), RecordError> {
    if game.moves.len() > usize::from(u16::MAX) {
        return Err(RecordError::GameTooLong {
            game: index,
            len: game.moves.len(),
        });
    }
    let mut pos = game.start.clone();
    for (ply, &m) in game.moves.iter().enumerate() {
        if !pos.is_legal(m) {
            return Err(RecordError::IllegalGameMove {
                game: index,
                ply,
                mv: m,
                fen: pos.fen(),
            });
        }
        pos.play_unchecked(m);
    }
    Ok(())
}

/// The record's game, after checking the index and that the ply is inside the game.
fn game_of<'a>(
    record: usize,
    rec: &PositionRecord,
    games: &'a [GameRecord],
) -> Result<&'a GameRecord, RecordError> {
    let game = games
        .get(rec.game as usize)
        .ok_or(RecordError::NoSuchGame {
            record,
            game: rec.game,
            games: games.len(),
        })?;
    if usize::from(rec.ply) > game.moves.len() {
        return Err(RecordError::PlyPastEnd {
            record,
            game: rec.game,
            ply: rec.ply,
            len: game.moves.len(),
        });
    }
    Ok(game)
}

fn check_record(
    record: usize,
    rec: &PositionRecord,
    games: &[GameRecord],
    policy: &[PolicyEntry],
) -> Result<(), RecordError> {
    let game = game_of(record, rec, games)?;
    let pos = game
        .position_at(usize::from(rec.ply))
        .expect("ply checked by game_of");
    check_record_at(record, rec, &pos, policy)
}

fn check_record_at(
    record: usize,
    rec: &PositionRecord,
    pos: &Position,
    policy: &[PolicyEntry],
) -> Result<(), RecordError> {
    if !rec.weight.is_finite() || rec.weight < 0.0 {
        return Err(RecordError::BadWeight {
            record,
            weight: rec.weight,
        });
    }
    if rec.root_wdl.iter().any(|v| !v.is_finite() || *v < 0.0) {
        return Err(RecordError::BadRootValue {
            record,
            wdl: rec.root_wdl,
        });
    }
    if policy.iter().all(|e| e.weight == 0) {
        return Err(RecordError::EmptyPolicy { record });
    }
    let legal = pos.legal_moves();
    for (i, e) in policy.iter().enumerate() {
        if !legal.contains(&e.mv) {
            return Err(RecordError::IllegalPolicyMove {
                record,
                mv: e.mv,
                fen: pos.fen(),
            });
        }
        if policy[..i].iter().any(|p| p.mv == e.mv) {
            return Err(RecordError::DuplicatePolicyMove { record, mv: e.mv });
        }
    }
    Ok(())
}
