"""A small UCI client for the Debian Fairy-Stockfish binary, in its xiangqi variant.

Fairy-Stockfish's UCI mode counts ranks 1-10 (`h3e3`); everything this module returns
is ICCS (`h2e2`, ranks 0-9), the notation xqzero uses.
"""

import os
import subprocess

BINARY = os.environ.get("XQZ_FAIRY_STOCKFISH", "/usr/games/fairy-stockfish")


def uci_to_iccs(m: str) -> str:
    """`b3b10` -> `b2b9`."""
    i = 1
    while m[i].isdigit():
        i += 1
    return f"{m[0]}{int(m[1:i]) - 1}{m[i]}{int(m[i + 1:]) - 1}"


def iccs_to_uci(m: str) -> str:
    """`b2b9` -> `b3b10`."""
    return f"{m[0]}{int(m[1]) + 1}{m[2]}{int(m[3]) + 1}"


class FairyStockfish:
    """One engine process; `perft`, `legal_moves` and `in_check` are synchronous."""

    def __init__(self, binary: str = BINARY):
        self.p = subprocess.Popen(
            [binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        self._send("uci")
        self._send("setoption name UCI_Variant value xiangqi")
        self._send("isready")
        self._read_until(lambda line: line == "readyok")

    def _send(self, line: str) -> None:
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def _read_until(self, stop):
        lines = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("fairy-stockfish exited")
            line = line.rstrip("\n")
            lines.append(line)
            if stop(line):
                return lines

    def divide(self, fen: str, depth: int) -> dict:
        """`go perft depth`: {iccs_move: nodes} plus the total under key None."""
        self._send(f"position fen {fen}")
        self._send(f"go perft {depth}")
        lines = self._read_until(lambda line: line.startswith("Nodes searched"))
        out = {None: int(lines[-1].split(":")[1])}
        for line in lines[:-1]:
            if ": " in line:
                m, n = line.split(": ")
                out[uci_to_iccs(m)] = int(n)
        return out

    def perft(self, fen: str, depth: int) -> int:
        return self.divide(fen, depth)[None]

    def legal_moves(self, fen: str) -> list:
        return sorted(m for m in self.divide(fen, 1) if m is not None)

    def in_check(self, fen: str) -> bool:
        """From the `Checkers:` line of the `d` command."""
        self._send(f"position fen {fen}")
        self._send("d")
        lines = self._read_until(lambda line: line.startswith("Checkers:"))
        return lines[-1].split(":", 1)[1].strip() != ""

    def close(self) -> None:
        try:
            self._send("quit")
            self.p.wait(timeout=5)
        except Exception:
            self.p.kill()
