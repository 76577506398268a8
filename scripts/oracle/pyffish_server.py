#!/usr/bin/env python3
"""Answers Xiangqi rules questions with pyffish (Fairy-Stockfish as a library).

Used by xq-core's differential test (crates/core/tests/differential.rs) as an
independent oracle. Protocol, one request per stdin line, one answer per stdout line,
in order:

    request:  <FEN>
    answer:   ok <in_check 0|1> <result> <move> <move> ...
              err <message>

Moves are ICCS (`h2e2`, ranks 0-9 from Red's side) and sorted; pyffish's own move
strings count ranks 1-10 and are converted here. <result> is pyffish's game_result for
a position with no legal move (a negative value means the side to move has lost, which
is what Xiangqi rules say for both mate and stalemate) and `-` otherwise.

pyffish rebuilds its engine threads on every call (about 1.6 ms a call on the project
machine), so callers send a few thousand positions, not hundreds of thousands.

With --check the script only imports pyffish and prints its version, so a caller can
fail fast with a clear message when the .venv is missing.
"""

import os
import sys

try:
    import pyffish as sf
except ImportError as e:  # pragma: no cover - reported to the caller
    sys.stderr.write(f"pyffish is not importable ({e}); run scripts/setup\n")
    sys.exit(3)

VARIANT = "xiangqi"


def iccs(uci_move: str) -> str:
    """`b3b10` (files a-i, ranks 1-10) -> `b2b9` (ranks 0-9)."""
    i = 1
    while uci_move[i].isdigit():
        i += 1
    from_file, from_rank = uci_move[0], int(uci_move[1:i])
    to_file, to_rank = uci_move[i], int(uci_move[i + 1 :])
    return f"{from_file}{from_rank - 1}{to_file}{to_rank - 1}"


def answer(fen: str) -> str:
    if sf.validate_fen(fen, VARIANT) != sf.FEN_OK:
        return "err invalid FEN for pyffish"
    moves = sorted(iccs(m) for m in sf.legal_moves(VARIANT, fen, []))
    check = 1 if sf.gives_check(VARIANT, fen, []) else 0
    result = str(sf.game_result(VARIANT, fen, [])) if not moves else "-"
    return " ".join(["ok", str(check), result] + moves)


def main() -> int:
    if "--check" in sys.argv[1:]:
        print("pyffish", ".".join(map(str, sf.version())))
        return 0
    # Fairy-Stockfish prints FEN diagnostics to C++ stdout; move that to stderr so it
    # cannot corrupt the answer stream, which keeps the original stdout.
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    for line in sys.stdin:
        fen = line.strip()
        if not fen:
            continue
        try:
            out.write(answer(fen) + "\n")
        except Exception as e:  # a bad request must not kill the stream
            out.write(f"err {type(e).__name__}: {e}\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
