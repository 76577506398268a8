#!/usr/bin/env python3
"""Writes tests/data/varied.perft: varied Xiangqi positions with perft counts 1-3.

Every random choice comes from one seeded generator, so rerunning the script writes
the same file. Positions come from:
  - master games (tests/data/hu_ronghua_1391_iccs.pgn): openings, middlegames, final
    positions;
  - random playouts from the start and from master-game positions;
  - positions in check and positions with no legal move (mate, stalemate) met on
    random playouts;
  - random endgame placements (a few pieces on points they can legally occupy);
  - hand-picked endgames and stalemates.
Counts come from the Fairy-Stockfish binary (`go perft N`, leaf bulk counting) and
are cross-checked at depths 1 and 2 against pyffish (a newer Fairy-Stockfish built as
a Python library); the script stops if the two disagree.

Usage: .venv/bin/python scripts/oracle/make_varied_perft.py [--out PATH]
"""

import argparse
import os
import random
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fsf import FairyStockfish, iccs_to_uci, uci_to_iccs  # noqa: E402

import pyffish as sf  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))
PGN = os.path.join(ROOT, "tests/data/hu_ronghua_1391_iccs.pgn")
START = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
SEED = 20261130
V = "xiangqi"

# Hand-picked positions: (comment, FEN).
HAND_PICKED = [
    ("stalemate: black general boxed in by the flying red general, a chariot and a soldier",
     "4k4/9/4P4/9/5R3/9/9/9/9/3K5 b - - 0 1"),
    ("stalemate: red general boxed in, mirror of the above",
     "3k5/9/9/9/9/5r3/9/4p4/9/4K4 w - - 0 1"),
    ("stalemate: black general boxed in, its horse blocked at both legs",
     "nP2k4/P8/4P4/9/5R3/9/9/9/9/3K5 b - - 0 1"),
    ("mate: double chariot (both chariots on the ninth rank)",
     "3k1R3/R8/9/9/9/9/9/9/9/4K4 b - - 0 1"),
    ("mate: chariot and horse, the flying red general guarding the e-file",
     "3k5/9/2N6/9/9/9/9/9/3R5/4K4 b - - 0 1"),
    ("mate: cannon behind horse (马后炮)",
     "3k5/9/9/3N5/9/9/9/3C5/9/4K4 b - - 0 1"),
    ("endgame: chariot against advisors and elephants",
     "2bak4/4a4/4b4/9/9/9/9/9/4R4/4K4 w - - 0 1"),
    ("endgame: horse and soldier against a lone general",
     "4k4/9/9/4P4/9/9/6N2/9/4A4/3AK4 w - - 0 1"),
    ("endgame: cannon and advisors against advisors",
     "3aka3/9/9/9/9/9/9/4C4/4A4/3AK4 w - - 0 1"),
    ("endgame: lone generals on different files",
     "3k5/9/9/9/9/9/9/9/9/5K3 w - - 0 1"),
    ("endgame: black soldiers on red's back rank beside a lone general",
     "3k5/9/9/9/9/9/9/9/9/p3K3p w - - 0 1"),
    ("cannon screens: cannons on the same file as both generals",
     "4k4/4c4/9/4p4/9/9/4P4/9/4C4/4K4 w - - 0 1"),
]

MOVE_RE = re.compile(r"\b[a-i][0-9][a-i][0-9]\b")


def master_games():
    games = []
    with open(PGN, encoding="utf-8") as f:
        moves = []
        for line in f:
            if line.startswith("["):
                if moves:
                    games.append(moves)
                    moves = []
                continue
            moves.extend(MOVE_RE.findall(line))
        if moves:
            games.append(moves)
    return games


def fen_after(fen, iccs_moves):
    return sf.get_fen(V, fen, [iccs_to_uci(m) for m in iccs_moves])


def legal(fen):
    return sorted(uci_to_iccs(m) for m in sf.legal_moves(V, fen, []))


def key(fen):
    """Board and side to move, ignoring the counters."""
    return " ".join(fen.split()[:2])


class Collector:
    def __init__(self):
        self.items = []  # (category, comment, fen)
        self.seen = set()

    def add(self, category, comment, fen):
        k = key(fen)
        if k in self.seen:
            return False
        self.seen.add(k)
        self.items.append((category, comment, fen))
        return True

    def count(self, category):
        return sum(1 for c, _, _ in self.items if c == category)


def random_playout(rng, fen, plies):
    """Plays up to `plies` random legal moves; returns the list of FENs visited after
    each move (stopping at a position with no legal move)."""
    out = []
    for _ in range(plies):
        moves = sf.legal_moves(V, fen, [])
        if not moves:
            break
        fen = sf.get_fen(V, fen, [rng.choice(moves)])
        out.append(fen)
    return out


# Points each piece may stand on, as (file, rank) for Red; Black mirrors the rank.
PALACE = [(f, r) for f in range(3, 6) for r in range(3)]
ADVISOR = [(3, 0), (5, 0), (4, 1), (3, 2), (5, 2)]
ELEPHANT = [(2, 0), (6, 0), (0, 2), (4, 2), (8, 2), (2, 4), (6, 4)]
SOLDIER = [(f, r) for f in (0, 2, 4, 6, 8) for r in (3, 4)] + [
    (f, r) for f in range(9) for r in range(5, 10)
]
ANYWHERE = [(f, r) for f in range(9) for r in range(10)]
POINTS = {"k": PALACE, "a": ADVISOR, "b": ELEPHANT, "p": SOLDIER,
          "r": ANYWHERE, "n": ANYWHERE, "c": ANYWHERE}


def board_fen(board, turn):
    rows = []
    for r in range(9, -1, -1):
        row, empty = "", 0
        for f in range(9):
            p = board.get((f, r))
            if p is None:
                empty += 1
            else:
                if empty:
                    row += str(empty)
                    empty = 0
                row += p
        if empty:
            row += str(empty)
        rows.append(row)
    return "/".join(rows) + f" {turn} - - 0 1"


def generals_face(board):
    gens = [sq for sq, p in board.items() if p in "kK"]
    (f1, r1), (f2, r2) = gens
    if f1 != f2:
        return False
    lo, hi = sorted((r1, r2))
    return all((f1, r) not in board for r in range(lo + 1, hi))


def random_endgame(rng, engine):
    """A random legal placement of a few pieces, or None."""
    board = {}
    for color in "wb":
        pieces = ["k"] + rng.sample(["r", "n", "c", "p", "p", "a", "a", "b", "b"],
                                    rng.randint(0, 4))
        for p in pieces:
            options = [(f, r if color == "w" else 9 - r) for f, r in POINTS[p]]
            options = [sq for sq in options if sq not in board]
            board[rng.choice(options)] = p.upper() if color == "w" else p
    if generals_face(board):
        return None
    turn = rng.choice("wb")
    other = "b" if turn == "w" else "w"
    # The side not to move must not be in check.
    if engine.in_check(board_fen(board, other)):
        return None
    return board_fen(board, turn)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "tests/data/varied.perft"))
    args = ap.parse_args()

    rng = random.Random(SEED)
    engine = FairyStockfish()
    games = master_games()
    col = Collector()

    # Master-game openings and middlegames, and final positions.
    while col.count("opening") < 20:
        g = rng.choice(games)
        k = rng.randint(1, min(16, len(g)))
        col.add("opening", f"master game, after {k} plies", fen_after(START, g[:k]))
    while col.count("middlegame") < 25:
        g = rng.choice(games)
        if len(g) < 30:
            continue
        k = rng.randint(20, min(80, len(g)))
        col.add("middlegame", f"master game, after {k} plies", fen_after(START, g[:k]))
    while col.count("master-final") < 10:
        g = rng.choice(games)
        col.add("master-final", f"master game, final position after {len(g)} plies",
                fen_after(START, g))

    # Random playouts from the start and from master-game positions; collect ordinary
    # positions, positions in check and positions with no legal move.
    while (col.count("random") < 20 or col.count("random-from-master") < 10
           or col.count("check") < 15 or col.count("no-legal-move") < 8):
        if rng.random() < 0.5:
            origin, fen = "start", START
        else:
            g = rng.choice(games)
            k = rng.randint(0, len(g))
            origin, fen = f"master game after {k} plies", fen_after(START, g[:k])
        trail = random_playout(rng, fen, 400)
        if not trail:
            continue
        last = trail[-1]
        if not sf.legal_moves(V, last, []) and col.count("no-legal-move") < 8:
            kind = "mate" if sf.gives_check(V, last, []) else "stalemate"
            col.add("no-legal-move", f"{kind} after {len(trail)} random plies from {origin}", last)
        i = rng.randrange(len(trail))
        cat = "random" if origin == "start" else "random-from-master"
        if col.count(cat) < (20 if cat == "random" else 10):
            col.add(cat, f"{i + 1} random plies from {origin}", trail[i])
        checks = [j for j, f in enumerate(trail) if sf.gives_check(V, f, [])]
        if checks and col.count("check") < 15:
            j = rng.choice(checks)
            col.add("check", f"in check, {j + 1} random plies from {origin}", trail[j])

    # Random endgame placements, including any stalemates they happen to produce.
    while col.count("endgame") < 20:
        fen = random_endgame(rng, engine)
        if fen is not None:
            col.add("endgame", "random endgame placement", fen)

    for comment, fen in HAND_PICKED:
        col.add("hand-picked", comment, fen)

    lines = [
        "# Varied Xiangqi perft positions; see tests/data/README.md.",
        "# Generated by scripts/oracle/make_varied_perft.py (seed %d) with counts from" % SEED,
        "# Fairy-Stockfish `go perft` (cross-checked against pyffish at depths 1-2).",
        "",
    ]
    n = 0
    for cat, comment, fen in col.items:
        board, turn = fen.split()[:2]
        if engine.in_check(f"{board} {'b' if turn == 'w' else 'w'} - - 0 1"):
            sys.exit(f"illegal position (the side not to move is in check): {fen}")
        counts = [engine.perft(fen, d) for d in (1, 2, 3)]
        moves = legal(fen)
        d2 = sum(len(sf.legal_moves(V, fen, [iccs_to_uci(m)])) for m in moves)
        if len(moves) != counts[0] or d2 != counts[1]:
            sys.exit(f"pyffish and Fairy-Stockfish disagree on {fen}: "
                     f"{len(moves)}/{d2} vs {counts[:2]}")
        n += 1
        lines.append(f"id {n:03} {cat}: {comment}")
        lines.append(f"epd {fen}")
        for d, c in enumerate(counts, 1):
            lines.append(f"perft {d} {c}")
        lines.append("")
    engine.close()

    tmp = tempfile.NamedTemporaryFile("w", dir=os.path.dirname(args.out), delete=False)
    with tmp:
        tmp.write("\n".join(lines))
    os.replace(tmp.name, args.out)
    print(f"wrote {n} positions to {args.out}")


if __name__ == "__main__":
    main()
