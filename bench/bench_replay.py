"""Replay throughput and re-judge time, for every game that can play itself.

    python bench/bench_replay.py [--games N] [--seed S]

For each game with ``legal_moves`` it generates long random games
(:mod:`referee.simulate`), drops the ``deal`` lines (as a camera sees the
table: hands unknown) and prints:

* replay throughput in events per second, on one core;
* the time to re-judge a whole game after amending its first play (an
  ``amend`` of the first ``play`` line with the same play, so the log stays
  legal and everything after it is re-judged).

Targets (issue 2): at least 50,000 events per second, and a re-judge of a
20-hand game under 20 ms.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from referee.games import GAMES  # noqa: E402
from referee.log import replay  # noqa: E402
from referee.simulate import random_game  # noqa: E402

PLAYERS = {"big-two": 4, "twenty-two": 4, "khanhoo": 4, "trumf": 4}




def bench_game(name: str, games: int, seed: int) -> None:
    rng = random.Random(seed)
    logs = []
    for _ in range(games):
        full = random_game(name, PLAYERS.get(name, 4), rng, max_events=50_000)
        logs.append([e for e in full if e["event"] != "deal"])
    events = sum(len(log) for log in logs)
    # throughput: best of 3 passes over all logs
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for log in logs:
            replay(log)
        best = min(best, time.perf_counter() - t0)
    rate = events / best
    # re-judge after amending the first play
    times, hands = [], []
    for log in logs:
        referee = replay(log)
        first = next(i for i, e in enumerate(log) if e["event"] == "play")
        hands.append(sum(1 for v in referee.verdicts if "hand_result" in v))
        samples = []
        for _ in range(5):
            again = replay(log)
            t0 = time.perf_counter()
            again.submit({"event": "amend", "index": first, "with": log[first]})
            samples.append(time.perf_counter() - t0)
        times.append(min(samples))
    per_hand = statistics.mean(t / max(h, 1) for t, h in zip(times, hands))
    print(f"{name:<11} {games} games, {events} events ({events / games:.0f} per game, "
          f"{statistics.mean(hands):.1f} hands per game)")
    print(f"{'':<11} replay: {rate:,.0f} events/s")
    print(f"{'':<11} re-judge after amending the first play: mean {statistics.mean(times) * 1000:.2f} ms, "
          f"max {max(times) * 1000:.2f} ms per game; {per_hand * 1000:.3f} ms per hand "
          f"-> {per_hand * 20 * 1000:.1f} ms for a 20-hand game")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", help="one game name")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, one process (one core)")
    for name, game in sorted(GAMES.items()):
        if args.only and name != args.only:
            continue
        try:
            game.legal_moves  # noqa: B018
            bench_game(name, args.games, args.seed)
        except NotImplementedError:
            print(f"{name:<11} no legal_moves: cannot simulate")


if __name__ == "__main__":
    main()
