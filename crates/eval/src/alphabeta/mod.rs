//! The built-in alpha-beta engine: a classic, fixed yardstick that needs no network.
//!
//! Negamax with alpha-beta pruning, iterative deepening, a transposition table,
//! check extension, a capture-only quiescence search (all moves when in check), and
//! move ordering by hash move, MVV-LVA captures, killer moves and a history table.
//! The evaluation is [`eval`]: material and piece-square tables.
//!
//! Rules inside the search: no legal move is a loss (mate and stalemate, 3.1/3.2); a
//! position that repeats one on the current line or in the game scores as a draw. The
//! finer 棋例 verdicts (perpetual check/chase lose) are left to the referee: the engine
//! may walk into them, which is part of what makes it a modest, stable opponent.

use std::time::Duration;

use xq_core::{Move, MoveList, Position};

pub mod eval;

use self::eval::{evaluate, material};
use crate::control::SearchControl;

/// Scores at or beyond this magnitude are mates.
pub const MATE: i32 = 30_000;
const INF: i32 = 32_000;
const MAX_PLY: usize = 96;

/// What bounds one search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbLimits {
    /// Deepest iteration (plies), at least 1.
    pub depth: u32,
    /// Stop after about this many nodes (checked every 1,024 nodes).
    pub nodes: Option<u64>,
    /// Stop after this much time; the last complete iteration's move is played.
    pub time: Option<Duration>,
}

impl AbLimits {
    pub const fn depth(depth: u32) -> AbLimits {
        AbLimits {
            depth,
            nodes: None,
            time: None,
        }
    }
}

/// What a search found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbResult {
    /// `None` only when the side to move has no legal move.
    pub best: Option<Move>,
    /// Score in centipawns for the side to move (mates near ±[`MATE`]).
    pub score: i32,
    /// Deepest completed iteration.
    pub depth: u32,
    pub nodes: u64,
    pub pv: Vec<Move>,
}

#[derive(Clone, Copy, Default)]
struct TtEntry {
    key: u64,
    mv: u16,
    score: i16,
    depth: i8,
    bound: u8, // 0 empty, 1 exact, 2 lower, 3 upper
}

const EXACT: u8 = 1;
const LOWER: u8 = 2;
const UPPER: u8 = 3;

/// The engine. Keeps its transposition table between searches of one game.
pub struct AlphaBeta {
    tt: Vec<TtEntry>,
    killers: [[Option<Move>; 2]; MAX_PLY],
    history: Box<[[i32; 90]; 90]>,
    nodes: u64,
    stop: bool,
    node_limit: Option<u64>,
    /// Hashes of the game so far, then of the current search line.
    line: Vec<u64>,
}

impl std::fmt::Debug for AlphaBeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlphaBeta")
            .field("tt_entries", &self.tt.len())
            .finish()
    }
}

impl AlphaBeta {
    /// An engine with a transposition table of about `tt_mb` MiB.
    pub fn new(tt_mb: usize) -> AlphaBeta {
        let entries = (tt_mb.max(1) << 20) / std::mem::size_of::<TtEntry>();
        let entries = entries.next_power_of_two() / 2;
        AlphaBeta {
            tt: vec![TtEntry::default(); entries.max(1024)],
            killers: [[None; 2]; MAX_PLY],
            history: Box::new([[0; 90]; 90]),
            nodes: 0,
            stop: false,
            node_limit: None,
            line: Vec::new(),
        }
    }

    /// Forgets everything learned (between games).
    pub fn clear(&mut self) {
        self.tt.iter_mut().for_each(|e| *e = TtEntry::default());
        self.killers = [[None; 2]; MAX_PLY];
        *self.history = [[0; 90]; 90];
    }

    /// Searches `pos`. `game_hashes` are the hashes of the positions before it in the
    /// game (since the last capture is enough), for repetition detection.
    pub fn search(&mut self, pos: &Position, game_hashes: &[u64], limits: AbLimits) -> AbResult {
        let control = SearchControl::new(limits.time);
        self.search_with(pos, game_hashes, limits, &[], &control, &mut |_| {})
    }

    /// Searches `pos` under external control (stop flag, a deadline that may change),
    /// never choosing a move in `banned` at the root (unless all are banned), and
    /// reporting each completed iteration to `on_iteration`.
    pub fn search_with(
        &mut self,
        pos: &Position,
        game_hashes: &[u64],
        limits: AbLimits,
        banned: &[Move],
        control: &SearchControl,
        on_iteration: &mut dyn FnMut(&AbResult),
    ) -> AbResult {
        self.nodes = 0;
        self.stop = false;
        self.node_limit = limits.nodes;
        self.line.clear();
        self.line.extend_from_slice(game_hashes);
        let mut root_moves = pos.legal_moves();
        if root_moves.iter().any(|m| !banned.contains(m)) {
            root_moves.retain(|m| !banned.contains(m));
        }
        if root_moves.is_empty() {
            return AbResult {
                best: None,
                score: -MATE,
                depth: 0,
                nodes: 0,
                pv: Vec::new(),
            };
        }
        let mut best = AbResult {
            best: Some(root_moves[0]),
            score: 0,
            depth: 0,
            nodes: 0,
            pv: vec![root_moves[0]],
        };
        for depth in 1..=limits.depth.max(1) {
            let (score, m) = self.root(pos, &root_moves, depth as i32, control);
            if self.stop && depth > 1 {
                break;
            }
            let mut pv = vec![m];
            let mut child = pos.clone();
            child.play_unchecked(m);
            pv.extend(self.pv_from_tt(&child, depth as usize - 1));
            best = AbResult {
                best: Some(m),
                score,
                depth,
                nodes: self.nodes,
                pv,
            };
            on_iteration(&best);
            // Mark the root move first for the next iteration.
            if let Some(i) = root_moves.iter().position(|&x| x == m) {
                root_moves[..=i].rotate_right(1);
            }
            if self.stop || score.abs() >= MATE - MAX_PLY as i32 {
                break;
            }
        }
        best.nodes = self.nodes;
        best
    }

    /// The capture-resolved static evaluation of `pos` for the side to move: the
    /// engine's quiescence search (captures only, every reply when in check) from a
    /// full window, without a node or time limit (capture sequences are finite: each
    /// removes a piece). A position without a legal move scores as lost.
    pub fn quiescence(&mut self, pos: &Position) -> i32 {
        self.nodes = 0;
        self.stop = false;
        self.node_limit = None;
        self.line.clear();
        self.quiesce(&SearchControl::default(), pos, 0, -INF, INF, 0)
    }

    /// One iteration at the root over `moves` (best first from the last iteration).
    fn root(
        &mut self,
        pos: &Position,
        moves: &[Move],
        depth: i32,
        control: &SearchControl,
    ) -> (i32, Move) {
        let mut alpha = -INF;
        let mut best = moves[0];
        self.line.push(pos.hash());
        for (i, &m) in moves.iter().enumerate() {
            let mut child = pos.clone();
            child.play_unchecked(m);
            let score = if i == 0 {
                -self.negamax(control, &child, depth - 1, 1, -INF, -alpha)
            } else {
                let s = -self.negamax(control, &child, depth - 1, 1, -alpha - 1, -alpha);
                if s > alpha {
                    -self.negamax(control, &child, depth - 1, 1, -INF, -alpha)
                } else {
                    s
                }
            };
            if self.stop {
                break;
            }
            if score > alpha {
                alpha = score;
                best = m;
            }
        }
        self.line.pop();
        (alpha, best)
    }

    fn pv_from_tt(&self, pos: &Position, max: usize) -> Vec<Move> {
        let mut pv = Vec::new();
        let mut p = pos.clone();
        let mut seen = Vec::new();
        while pv.len() < max {
            let e = self.tt[self.slot(p.hash())];
            if e.key != p.hash() || e.bound == 0 {
                break;
            }
            let Some(m) = Move::from_u16(e.mv) else { break };
            if !p.is_legal(m) || seen.contains(&p.hash()) {
                break;
            }
            seen.push(p.hash());
            p.play_unchecked(m);
            pv.push(m);
        }
        pv
    }

    #[inline]
    fn slot(&self, key: u64) -> usize {
        (key as usize) & (self.tt.len() - 1)
    }

    fn check_limits(&mut self, control: &SearchControl) {
        if self.nodes & 1023 == 0 {
            if control.should_stop() {
                self.stop = true;
            }
            if self.node_limit.is_some_and(|n| self.nodes >= n) {
                self.stop = true;
            }
        }
    }

    fn is_repetition(&self, hash: u64, halfmoves: u32) -> bool {
        // Only positions since the last capture can repeat; same side to move means
        // every second entry.
        let n = self.line.len();
        let window = (halfmoves as usize).min(n);
        let mut i = 2;
        while i <= window {
            if self.line[n - i] == hash {
                return true;
            }
            i += 2;
        }
        false
    }

    fn negamax(
        &mut self,
        control: &SearchControl,
        pos: &Position,
        mut depth: i32,
        ply: usize,
        mut alpha: i32,
        beta: i32,
    ) -> i32 {
        self.nodes += 1;
        self.check_limits(control);
        if self.stop {
            return 0;
        }
        if ply > 0 && self.is_repetition(pos.hash(), pos.halfmoves()) {
            return 0;
        }
        let in_check = pos.is_check();
        if in_check && ply < MAX_PLY / 2 {
            depth += 1;
        }
        if depth <= 0 || ply >= MAX_PLY - 1 {
            return self.quiesce(control, pos, ply, alpha, beta, 0);
        }
        let key = pos.hash();
        let slot = self.slot(key);
        let entry = self.tt[slot];
        let mut tt_move = None;
        if entry.key == key && entry.bound != 0 {
            tt_move = Move::from_u16(entry.mv);
            if ply > 0 && entry.depth as i32 >= depth {
                let s = score_from_tt(entry.score as i32, ply);
                match entry.bound {
                    EXACT => return s,
                    LOWER if s >= beta => return s,
                    UPPER if s <= alpha => return s,
                    _ => {}
                }
            }
        }
        let mut moves = pos.legal_moves();
        if moves.is_empty() {
            return -MATE + ply as i32;
        }
        self.order(pos, &mut moves, tt_move, ply);
        let alpha0 = alpha;
        let mut best_score = -INF;
        let mut best_move = moves[0];
        self.line.push(key);
        for (i, &m) in moves.iter().enumerate() {
            let mut child = pos.clone();
            child.play_unchecked(m);
            let score = if i == 0 {
                -self.negamax(control, &child, depth - 1, ply + 1, -beta, -alpha)
            } else {
                // Principal variation search: a null window first.
                let s = -self.negamax(control, &child, depth - 1, ply + 1, -alpha - 1, -alpha);
                if s > alpha && s < beta {
                    -self.negamax(control, &child, depth - 1, ply + 1, -beta, -alpha)
                } else {
                    s
                }
            };
            if self.stop {
                self.line.pop();
                return 0;
            }
            if score > best_score {
                best_score = score;
                best_move = m;
            }
            if score > alpha {
                alpha = score;
            }
            if alpha >= beta {
                if !pos.is_capture(m) {
                    let k = &mut self.killers[ply];
                    if k[0] != Some(m) {
                        k[1] = k[0];
                        k[0] = Some(m);
                    }
                    self.history[m.from().index()][m.to().index()] += depth * depth;
                }
                break;
            }
        }
        self.line.pop();
        let bound = if best_score >= beta {
            LOWER
        } else if best_score > alpha0 {
            EXACT
        } else {
            UPPER
        };
        self.tt[slot] = TtEntry {
            key,
            mv: best_move.to_u16(),
            score: score_to_tt(best_score, ply) as i16,
            depth: depth.min(127) as i8,
            bound,
        };
        best_score
    }

    fn quiesce(
        &mut self,
        control: &SearchControl,
        pos: &Position,
        ply: usize,
        mut alpha: i32,
        beta: i32,
        qdepth: u32,
    ) -> i32 {
        self.nodes += 1;
        self.check_limits(control);
        if self.stop {
            return 0;
        }
        let in_check = pos.is_check();
        let mut moves = pos.legal_moves();
        if moves.is_empty() {
            return -MATE + ply as i32;
        }
        if !in_check || qdepth >= 6 || ply >= MAX_PLY - 1 {
            let stand = evaluate(pos);
            if stand >= beta || ply >= MAX_PLY - 1 {
                return stand;
            }
            alpha = alpha.max(stand);
            moves.retain(|m| pos.is_capture(*m));
        }
        moves.sort_by_key(|&m| -mvv_lva(pos, m));
        for &m in &moves {
            let mut child = pos.clone();
            child.play_unchecked(m);
            let score = -self.quiesce(control, &child, ply + 1, -beta, -alpha, qdepth + 1);
            if self.stop {
                return 0;
            }
            if score >= beta {
                return score;
            }
            alpha = alpha.max(score);
        }
        alpha
    }

    fn order(&self, pos: &Position, moves: &mut MoveList, tt_move: Option<Move>, ply: usize) {
        let killers = self.killers[ply];
        moves.sort_by_cached_key(|&m| {
            let key = if Some(m) == tt_move {
                1_000_000
            } else if pos.is_capture(m) {
                100_000 + mvv_lva(pos, m)
            } else if killers[0] == Some(m) {
                90_000
            } else if killers[1] == Some(m) {
                80_000
            } else {
                self.history[m.from().index()][m.to().index()].min(70_000)
            };
            -key
        });
    }
}

fn mvv_lva(pos: &Position, m: Move) -> i32 {
    let victim = pos.captured(m).map_or(0, |p| material(p.role));
    let attacker = pos.piece_at(m.from()).map_or(0, |p| material(p.role));
    victim * 8 - attacker / 8
}

fn score_to_tt(s: i32, ply: usize) -> i32 {
    if s >= MATE - MAX_PLY as i32 {
        s + ply as i32
    } else if s <= -MATE + MAX_PLY as i32 {
        s - ply as i32
    } else {
        s
    }
}

fn score_from_tt(s: i32, ply: usize) -> i32 {
    if s >= MATE - MAX_PLY as i32 {
        s - ply as i32
    } else if s <= -MATE + MAX_PLY as i32 {
        s + ply as i32
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn best(fen: &str, depth: u32) -> AbResult {
        let pos = Position::from_fen(fen).unwrap();
        AlphaBeta::new(4).search(&pos, &[], AbLimits::depth(depth))
    }

    #[test]
    fn finds_mate_in_one() {
        // Red chariot to the back rank mates: the black cannon on e8 boxes its general in.
        let r = best("4k4/4c4/9/9/9/9/9/9/9/R3K4 w - - 0 1", 3);
        assert_eq!(r.best.unwrap().to_string(), "a0a9");
        assert!(r.score >= MATE - 2, "score {}", r.score);
    }

    #[test]
    fn takes_a_hanging_chariot() {
        let r = best("4k4/9/9/9/r8/9/9/9/9/R2K5 w - - 0 1", 2);
        assert_eq!(r.best.unwrap().to_string(), "a0a5");
    }

    #[test]
    fn no_move_when_stalemated() {
        let r = best("4k4/9/4P1N2/9/9/9/9/9/9/3RK4 b - - 0 1", 3);
        assert_eq!(r.best, None);
    }

    #[test]
    fn repeated_search_is_deterministic() {
        let pos = Position::startpos();
        let a = AlphaBeta::new(4).search(&pos, &[], AbLimits::depth(4));
        let b = AlphaBeta::new(4).search(&pos, &[], AbLimits::depth(4));
        assert_eq!(a, b);
    }
}
