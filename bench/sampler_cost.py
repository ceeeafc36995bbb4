"""Sampler cost: the login lab's baseline with the wait-event sampler on and off.

Alternates `pgopt lab run login --steps baseline` with and without
`--no-sampler` against one server, so both see the same machine and drift.
"""

from __future__ import annotations

import argparse

from common import pgopt_run, report, server_dsn

from pgopt.binaries import CLIENT_PROGRAMS, SERVER_PROGRAMS, find_binaries
from pgopt.target.embedded import EmbeddedTarget


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--duration", type=int, default=20)
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    binaries = find_binaries(None, need=CLIENT_PROGRAMS + SERVER_PROGRAMS)
    on: list[float] = []
    off: list[float] = []
    with EmbeddedTarget(binaries) as server:
        dsn = server_dsn(server)
        common = [
            "login",
            "--dsn",
            dsn,
            "--steps",
            "baseline",
            "--reps",
            "1",
            "--duration",
            str(args.duration),
            "--scale",
            str(args.scale),
        ]
        for _ in range(args.rounds):
            for flags, samples in (([], on), (["--no-sampler"], off)):
                result = pgopt_run(common + flags)
                samples.append(result["steps"][0]["metric"]["median"])  # type: ignore[index]
    report("sampler on", on, "sampler off", off)


if __name__ == "__main__":
    main()
