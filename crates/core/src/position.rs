//! `Position`: a validated position with legal move generation.

use std::fmt;

use crate::{
    Bitboard, Color, Move, MoveList, Piece, Role, Setup, Square,
    attacks::{
        self, ELEPHANT, GENERAL, HORSE_ATTACKERS_BY_LEG, HORSE_BY_LEG, RAYS, SOLDIER,
        SOLDIER_ATTACKERS, first_blocker,
    },
    setup::{PositionError, validate_material},
    zobrist,
};

/// A legal Xiangqi position: every piece on a reachable point, one general a side, the
/// generals not facing, and the side not to move not in check.
///
/// The only ways to get one are [`Position::from_setup`] (and the FEN parser built on
/// it), [`Position::startpos`] and playing legal moves. Equality compares the board,
/// the side to move and the counters.
#[derive(Clone, PartialEq, Eq)]
pub struct Position {
    board: [Option<Piece>; 90],
    by_color: [Bitboard; 2],
    by_role: [Bitboard; 7],
    occupied: Bitboard,
    generals: [Square; 2],
    turn: Color,
    halfmoves: u32,
    fullmoves: u32,
    hash: u64,
}

/// A move that is not legal in the position it was played in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("illegal move {m} in {fen}")]
pub struct IllegalMoveError {
    pub m: Move,
    pub fen: String,
}

/// Text that is not a legal ICCS move in a position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlayError {
    #[error(transparent)]
    Parse(#[from] crate::ParseMoveError),
    #[error(transparent)]
    Illegal(#[from] IllegalMoveError),
}

impl Default for Position {
    fn default() -> Position {
        Position::startpos()
    }
}

impl Position {
    /// The starting position.
    pub fn startpos() -> Position {
        Position::from_setup(Setup::start()).expect("the starting position is legal")
    }

    /// Validates a setup.
    ///
    /// # Errors
    /// A [`PositionError`] naming the first problem found.
    pub fn from_setup(setup: Setup) -> Result<Position, PositionError> {
        validate_material(&setup)?;
        let mut pos = Position {
            board: [None; 90],
            by_color: [Bitboard::EMPTY; 2],
            by_role: [Bitboard::EMPTY; 7],
            occupied: Bitboard::EMPTY,
            generals: [Square::new(0); 2],
            turn: setup.turn,
            halfmoves: setup.halfmoves,
            fullmoves: setup.fullmoves.max(1),
            hash: zobrist::turn_key(setup.turn),
        };
        for sq in Square::all() {
            if let Some(p) = setup.board[sq.index()] {
                pos.put(p, sq);
                pos.hash ^= zobrist::piece_key(p, sq);
                if p.role == Role::General {
                    pos.generals[p.color.index()] = sq;
                }
            }
        }
        let (r, b) = (pos.generals[0], pos.generals[1]);
        if r.file() == b.file() && (Bitboard(RAYS[0][r.index()]) & pos.occupied).first() == Some(b)
        {
            return Err(PositionError::FacingGenerals);
        }
        let them = setup.turn.other();
        if pos.is_attacked(pos.generals[them.index()], setup.turn, pos.occupied) {
            return Err(PositionError::OppositeCheck(them));
        }
        Ok(pos)
    }

    /// The position as a plain setup.
    pub fn to_setup(&self) -> Setup {
        Setup {
            board: self.board,
            turn: self.turn,
            halfmoves: self.halfmoves,
            fullmoves: self.fullmoves,
        }
    }

    #[inline]
    fn put(&mut self, p: Piece, sq: Square) {
        self.board[sq.index()] = Some(p);
        let b = Bitboard::from_square(sq);
        self.by_color[p.color.index()] |= b;
        self.by_role[p.role.index()] |= b;
        self.occupied |= b;
    }

    // --- Accessors -------------------------------------------------------------------

    #[inline]
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        self.board[sq.index()]
    }

    #[inline]
    pub fn turn(&self) -> Color {
        self.turn
    }

    /// Plies since the last capture (the FEN half-move clock).
    #[inline]
    pub fn halfmoves(&self) -> u32 {
        self.halfmoves
    }

    #[inline]
    pub fn fullmoves(&self) -> u32 {
        self.fullmoves
    }

    /// Zobrist hash of the pieces and side to move (see [`crate::zobrist`]).
    #[inline]
    pub fn hash(&self) -> u64 {
        self.hash
    }

    #[inline]
    pub fn occupied(&self) -> Bitboard {
        self.occupied
    }

    #[inline]
    pub fn by_color(&self, c: Color) -> Bitboard {
        self.by_color[c.index()]
    }

    #[inline]
    pub fn by_role(&self, r: Role) -> Bitboard {
        self.by_role[r.index()]
    }

    #[inline]
    pub fn pieces(&self, c: Color, r: Role) -> Bitboard {
        self.by_color[c.index()] & self.by_role[r.index()]
    }

    #[inline]
    pub fn general(&self, c: Color) -> Square {
        self.generals[c.index()]
    }

    /// The pieces as `(square, piece)`, a0 first.
    pub fn pieces_iter(&self) -> impl Iterator<Item = (Square, Piece)> + '_ {
        self.occupied
            .map(|sq| (sq, self.board[sq.index()].expect("occupied")))
    }

    // --- Attacks ---------------------------------------------------------------------

    /// Whether `by` attacks `sq` with occupancy `occ`, counting only `by`'s pieces in
    /// `occ` (so a piece just captured on a square of `occ` does not count if the
    /// caller removed it from `by`'s set via `occ`... see [`Self::attacked_with`]).
    #[inline]
    fn is_attacked(&self, sq: Square, by: Color, occ: Bitboard) -> bool {
        self.attacked_with(sq, by, occ, self.by_color[by.index()])
    }

    /// Attack test on a hypothetical board: occupancy `occ`, attacker pieces limited to
    /// `theirs`. Covers chariots, cannons, horses, soldiers and the flying general; the
    /// other pieces can never attack a general.
    #[inline]
    fn attacked_with(&self, sq: Square, by: Color, occ: Bitboard, theirs: Bitboard) -> bool {
        let theirs = theirs.0;
        let chariots = self.by_role[Role::Chariot.index()].0 & theirs;
        let cannons = self.by_role[Role::Cannon.index()].0 & theirs;
        let general = self.by_role[Role::General.index()].0 & theirs;
        let horses = self.by_role[Role::Horse.index()].0 & theirs;
        let soldiers = self.by_role[Role::Soldier.index()].0 & theirs;
        // Cheap table tests first: most squares have no horse within reach and most
        // rays hold no enemy slider, so the leg and blocker look-ups are skipped.
        let reach = &HORSE_ATTACKERS_BY_LEG[sq.index()];
        if (reach[0] | reach[1] | reach[2] | reach[3]) & horses != 0
            && attacks::horse_attackers(sq, occ).0 & horses != 0
        {
            return true;
        }
        if SOLDIER_ATTACKERS[by.index()][sq.index()] & soldiers != 0 {
            return true;
        }
        for (dir, rays) in RAYS.iter().enumerate() {
            let sliders = if dir % 2 == 0 {
                chariots | cannons | general
            } else {
                chariots | cannons
            };
            if rays[sq.index()] & sliders == 0 {
                continue;
            }
            if let Some(b1) = first_blocker(dir, sq, occ.0) {
                let bb = 1u128 << b1.index();
                let line = if dir % 2 == 0 {
                    chariots | general
                } else {
                    chariots
                };
                if bb & line != 0 {
                    return true;
                }
                if cannons != 0
                    && let Some(b2) = first_blocker(dir, b1, occ.0)
                    && (1u128 << b2.index()) & cannons != 0
                {
                    return true;
                }
            }
        }
        false
    }

    /// All pieces of `by` that attack `sq` given occupancy `occ`: every piece that could
    /// capture on `sq` if an enemy stood there (the general's flying attack included).
    pub fn attackers(&self, sq: Square, by: Color, occ: Bitboard) -> Bitboard {
        let theirs = self.by_color[by.index()];
        let lines = attacks::chariot_attacks(sq, occ);
        // The general attacks along its file like a chariot (将帅对面) and one step
        // inside its palace.
        let file = Bitboard(attacks::FILES[sq.file().index()]);
        let mut a = (lines & self.by_role(Role::Chariot))
            | (lines & file & self.by_role(Role::General))
            | (attacks::cannon_attacks(sq, occ) & self.by_role(Role::Cannon))
            | (attacks::horse_attackers(sq, occ) & self.by_role(Role::Horse))
            | (Bitboard(SOLDIER_ATTACKERS[by.index()][sq.index()]) & self.by_role(Role::Soldier))
            | (Bitboard(GENERAL[sq.index()]) & self.by_role(Role::General))
            | (attacks::advisor_attacks(sq) & self.by_role(Role::Advisor));
        if sq.is_home(by) {
            a |= attacks::elephant_attacks(by, sq, occ) & self.by_role(Role::Elephant);
        }
        a & theirs
    }

    /// The enemy pieces giving check to the side to move.
    pub fn checkers(&self) -> Bitboard {
        let them = self.turn.other();
        self.attackers(self.generals[self.turn.index()], them, self.occupied)
    }

    /// Whether the side to move is in check (flying general included).
    #[inline]
    pub fn is_check(&self) -> bool {
        self.is_attacked(
            self.generals[self.turn.index()],
            self.turn.other(),
            self.occupied,
        )
    }

    // --- Move generation -------------------------------------------------------------

    /// Every pseudo-legal move: each piece moves by its rules, without regard to the
    /// own general's safety.
    pub fn pseudo_legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        for from in self.by_color[self.turn.index()] {
            for to in self.targets(from) {
                list.push(Move::new(from, to));
            }
        }
        list
    }

    /// Where the side to move's piece on `from` may go by its movement rule alone.
    #[inline(always)]
    fn targets(&self, from: Square) -> Bitboard {
        let us = self.turn;
        let own = self.by_color[us.index()];
        let occ = self.occupied;
        let role = self.board[from.index()].expect("own piece").role;
        match role {
            Role::Chariot => attacks::chariot_attacks(from, occ) & !own,
            Role::Cannon => {
                let them = self.by_color[us.other().index()];
                let mut quiet = 0u128;
                let mut caps = 0u128;
                for (dir, rays) in RAYS.iter().enumerate() {
                    let ray = rays[from.index()];
                    match first_blocker(dir, from, occ.0) {
                        Some(screen) => {
                            quiet |= ray ^ rays[screen.index()];
                            quiet &= !(1u128 << screen.index());
                            if let Some(t) = first_blocker(dir, screen, occ.0) {
                                caps |= 1u128 << t.index();
                            }
                        }
                        None => quiet |= ray,
                    }
                }
                Bitboard(quiet | (caps & them.0))
            }
            Role::Horse => {
                let mut t = 0u128;
                for (i, d) in attacks::DIRS.iter().enumerate() {
                    let legs = HORSE_BY_LEG[from.index()][i];
                    if legs != 0 {
                        let leg = Square::new((from.index() as i32 + d.1 * 9 + d.0) as u32);
                        if !occ.contains(leg) {
                            t |= legs;
                        }
                    }
                }
                Bitboard(t) & !own
            }
            Role::Elephant => {
                let mut t = 0u128;
                let tab = &ELEPHANT[us.index()][from.index()];
                for (i, d) in attacks::DIAGS.iter().enumerate() {
                    if tab[i] != 0 {
                        let eye = Square::new((from.index() as i32 + d.1 * 9 + d.0) as u32);
                        if !occ.contains(eye) {
                            t |= tab[i];
                        }
                    }
                }
                Bitboard(t) & !own
            }
            Role::Advisor => attacks::advisor_attacks(from) & !own,
            Role::General => Bitboard(GENERAL[from.index()]) & !own,
            Role::Soldier => Bitboard(SOLDIER[us.index()][from.index()]) & !own,
        }
    }

    /// The points where a move's origin or destination calls for an attack test (see
    /// [`Safety`]), computed once per position.
    #[inline]
    fn safety(&self) -> Safety {
        let us = self.turn;
        let g = self.generals[us.index()];
        let them = self.by_color[us.other().index()].0;
        let chariots = self.by_role[Role::Chariot.index()].0 & them;
        let cannons = self.by_role[Role::Cannon.index()].0 & them;
        let general = self.by_role[Role::General.index()].0 & them;
        let horses = self.by_role[Role::Horse.index()].0 & them;
        let in_check = self.is_check();
        let mut risky_from = 1u128 << g.index();
        let mut risky_to = 0u128;
        for (dir, rays) in RAYS.iter().enumerate() {
            let ray = rays[g.index()];
            let sliders = if dir % 2 == 0 {
                chariots | cannons | general
            } else {
                chariots | cannons
            };
            if ray & sliders != 0 {
                risky_from |= ray;
            }
            if ray & cannons != 0 {
                risky_to |= ray;
            }
        }
        let reach = &HORSE_ATTACKERS_BY_LEG[g.index()];
        for (i, d) in attacks::DIAGS.iter().enumerate() {
            if reach[i] & horses != 0 {
                // The leg is on the board whenever a horse square behind it is.
                risky_from |= 1u128 << (g.index() as i32 + d.1 * 9 + d.0);
            }
        }
        Safety {
            in_check,
            risky_from,
            risky_to,
        }
    }

    /// Whether a pseudo-legal move leaves the own general safe, assuming the position
    /// itself is legal; `safety` is [`Self::safety`] of this position.
    #[inline]
    fn is_safe(&self, m: Move, safety: &Safety) -> bool {
        let (from, to) = (m.from(), m.to());
        if !safety.in_check
            && (safety.risky_from & (1u128 << from.index())) == 0
            && (safety.risky_to & (1u128 << to.index())) == 0
        {
            return true;
        }
        let us = self.turn;
        let g = self.generals[us.index()];
        let occ = self.occupied.without(from).with(to);
        let theirs = self.by_color[us.other().index()].without(to);
        let king = if from == g { to } else { g };
        !self.attacked_with(king, us.other(), occ, theirs)
    }

    /// Every legal move.
    pub fn legal_moves(&self) -> MoveList {
        let mut list = self.pseudo_legal_moves();
        let safety = self.safety();
        list.retain(|m| self.is_safe(*m, &safety));
        list
    }

    /// The number of legal moves (perft's bulk count).
    ///
    /// Counts in bulk where [`Self::is_safe`] needs no test: the targets of a piece on a
    /// point that is not risky to leave are counted with a popcount, except those on
    /// points that are risky to enter.
    pub fn count_legal(&self) -> usize {
        let safety = self.safety();
        let mut n = 0;
        for from in self.by_color[self.turn.index()] {
            let targets = self.targets(from);
            let safe = |to: &Square| self.is_safe(Move::new(from, *to), &safety);
            if safety.in_check || (1u128 << from.index()) & safety.risky_from != 0 {
                n += targets.filter(safe).count();
            } else {
                n += (targets.0 & !safety.risky_to).count_ones() as usize;
                n += Bitboard(targets.0 & safety.risky_to).filter(safe).count();
            }
        }
        n
    }

    /// Whether the side to move has any legal move.
    pub fn has_legal_move(&self) -> bool {
        let safety = self.safety();
        let mut own = self.by_color[self.turn.index()];
        // `Iterator::any` by name: `Bitboard::any` (non-empty) would shadow it.
        Iterator::any(&mut own, |from| {
            Iterator::any(&mut self.targets(from), |to| {
                self.is_safe(Move::new(from, to), &safety)
            })
        })
    }

    /// Whether `m` is legal here.
    pub fn is_legal(&self, m: Move) -> bool {
        match self.board[m.from().index()] {
            Some(p) if p.color == self.turn => {}
            _ => return false,
        }
        // The match above made sure `from` holds a piece of the side to move.
        self.targets(m.from()).contains(m.to()) && self.is_safe(m, &self.safety())
    }

    /// Whether the side to move is checkmated or stalemated (both lose, 3.1 and 3.2).
    pub fn is_game_over(&self) -> bool {
        !self.has_legal_move()
    }

    /// Whether `m` captures.
    #[inline]
    pub fn is_capture(&self, m: Move) -> bool {
        self.board[m.to().index()].is_some()
    }

    /// The piece `m` captures, if any.
    #[inline]
    pub fn captured(&self, m: Move) -> Option<Piece> {
        self.board[m.to().index()]
    }

    /// Whether playing the legal move `m` checks the opponent.
    pub fn gives_check(&self, m: Move) -> bool {
        let mut p = self.clone();
        p.play_unchecked(m);
        p.is_check()
    }

    // --- Making moves ----------------------------------------------------------------

    /// Plays a move known to be legal (from [`Self::legal_moves`] or checked with
    /// [`Self::is_legal`]). An illegal move leaves the position inconsistent.
    #[inline]
    pub fn play_unchecked(&mut self, m: Move) {
        let (from, to) = (m.from(), m.to());
        let piece = self.board[from.index()].expect("a piece on the from square");
        let fb = Bitboard::from_square(from);
        let tb = Bitboard::from_square(to);
        if let Some(cap) = self.board[to.index()] {
            self.by_color[cap.color.index()] ^= tb;
            self.by_role[cap.role.index()] ^= tb;
            self.hash ^= zobrist::piece_key(cap, to);
            self.halfmoves = 0;
        } else {
            self.halfmoves += 1;
        }
        self.board[to.index()] = Some(piece);
        self.board[from.index()] = None;
        self.by_color[piece.color.index()] ^= fb | tb;
        self.by_role[piece.role.index()] ^= fb | tb;
        self.occupied = (self.occupied ^ fb) | tb;
        self.hash ^= zobrist::piece_key(piece, from) ^ zobrist::piece_key(piece, to);
        if piece.role == Role::General {
            self.generals[piece.color.index()] = to;
        }
        if self.turn == Color::Black {
            self.fullmoves += 1;
        }
        self.turn = self.turn.other();
        self.hash ^= zobrist::BLACK_TO_MOVE;
    }

    /// Plays `m` if it is legal.
    ///
    /// # Errors
    /// [`IllegalMoveError`] if `m` is not legal here; the position is unchanged.
    pub fn play(&mut self, m: Move) -> Result<(), IllegalMoveError> {
        if self.is_legal(m) {
            self.play_unchecked(m);
            Ok(())
        } else {
            Err(IllegalMoveError { m, fen: self.fen() })
        }
    }

    /// Parses an ICCS move and checks that it is legal here.
    ///
    /// # Errors
    /// If the text is not ICCS or the move is illegal.
    pub fn parse_iccs(&self, s: &str) -> Result<Move, PlayError> {
        let m = Move::from_iccs(s)?;
        if self.is_legal(m) {
            Ok(m)
        } else {
            Err(IllegalMoveError { m, fen: self.fen() }.into())
        }
    }

    /// The hash recomputed from scratch (for tests of the incremental update).
    pub fn compute_hash(&self) -> u64 {
        self.pieces_iter()
            .fold(zobrist::turn_key(self.turn), |h, (sq, p)| {
                h ^ zobrist::piece_key(p, sq)
            })
    }

    /// The FEN of this position.
    pub fn fen(&self) -> String {
        crate::fen::Fen::from_setup(&self.to_setup()).to_string()
    }
}

/// Which moves need an attack test to be known safe for the own general.
///
/// When the side to move is not in check, a move by a piece other than the general can
/// expose the general only by opening a line or a horse leg, or by becoming a cannon
/// screen: by leaving a point of a ray from the general that holds an enemy chariot,
/// cannon or (on the file) general, leaving the leg point of an enemy horse's attack,
/// or entering a ray that holds an enemy cannon. Every other move is safe without a
/// test; in check, every move is tested.
#[derive(Debug, Clone, Copy)]
struct Safety {
    in_check: bool,
    /// Origins that need a test: those points, and the general's own square.
    risky_from: u128,
    /// Destinations that need a test.
    risky_to: u128,
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({})", self.fen())
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.fen())
    }
}
