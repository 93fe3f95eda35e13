"""Benchmark of the scorer on long and adversarial model outputs: prints, per case, the output
length and the time to score it (median of a few runs), so the cost bound stays visible.

Usage: ``python -m scripts.bench_scoring`` (about a second).
"""

from __future__ import annotations

import random
import statistics
import time

from misi_bench.builder.scoring import score_prediction

T9_GOLD = "ASN 460 OD1 A, O1B; ARG 766 NH2 A, O3"


def cases(size: int = 1_000_000) -> dict[str, tuple[str, str, str]]:
    """Name -> (task, model output of about ``size`` characters, gold answer)."""
    rng = random.Random(0)
    words = [
        "the",
        "ligand",
        "moves",
        "along",
        "x",
        "so",
        "the",
        "rotation",
        "about",
        "y",
        "and",
        "then",
        "move",
        "x",
        "2",
        "would",
        "be",
        "roll",
        "z",
        "15",
        "option",
        "A",
        "is",
        "wrong",
        "ASN",
        "OD1",
        "no",
    ]
    filler = " ".join(rng.choice(words) for _ in range(size // 4))[:size]
    return {
        "reasoning then final answer": (
            "translation",
            filler + " Final answer: move x 3",
            "move x 3",
        ),
        "final answer then explanation": (
            "translation",
            "Final answer: move x 3\n" + filler.replace("answer", "reply"),
            "move x 3",
        ),
        "think block then answer": (
            "docking",
            "<think>" + filler + "</think> roll y 60, move x -14",
            "roll y 60, move x -14",
        ),
        "stars only": ("pocket_ligand", "*" * size, T9_GOLD),
        "star-word pattern": ("pocket_ligand", "*a " * (size // 3), T9_GOLD),
        "many 'answer' words": ("rotation_rotation", "answer " * (size // 7), "A"),
        "many closing tags": ("rotation_rotation", "</b> " * (size // 5), "A"),
        "table pipes": ("pocket_ligand", "| ASN | 460 |\n" * (size // 14), T9_GOLD),
        "one line of bonds": ("pocket_ligand", "ASN 460 OD1 A, O1B; " * (size // 20), T9_GOLD),
        "non-ASCII text": (
            "translation",
            "\u0130\u00c5" * (size // 2) + " answer: move x 3",
            "move x 3",
        ),
    }


def main(repeats: int = 5) -> None:
    score_prediction("translation", "move x 3", "move x 3")  # compile the patterns once
    for name, (task, text, gold) in cases().items():
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            score = score_prediction(task, text, gold)["score"]
            times.append(time.perf_counter() - start)
        print(
            f"{name:32s} {len(text) / 1e6:5.2f} M chars  {1000 * statistics.median(times):7.1f} ms  score {score:.2f}"
        )


if __name__ == "__main__":
    main()
