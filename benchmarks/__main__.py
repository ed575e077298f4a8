"""``python -m benchmarks [--only W1,W3] [--rounds N] [--gap S] [--no-peers] [--json FILE]``

Prints the markdown table of W1-W7: NumPy, kiln's C++ backend and, when installed,
torch.compile / JAX / numba, with medians of interleaved runs, the ratio to NumPy,
first-call (compile) time and the max error against a float64 reference.
"""
import argparse
import json

from .harness import run, table


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    p.add_argument("--only", default="", help="comma list of workloads (W1,...,W7)")
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--gap", type=float, default=0.1, help="seconds of sleep before each sample")
    p.add_argument("--no-peers", action="store_true", help="skip torch/JAX/numba even if installed")
    p.add_argument("--json", default="", help="also write the raw results to this file")
    p.add_argument("--threads", type=int, default=0, help="kiln.config.num_threads (default: all CPUs)")
    args = p.parse_args()
    if args.threads:
        import kiln
        kiln.config.num_threads = args.threads
    only = [w.strip() for w in args.only.split(",") if w.strip()] or None
    report = run(only, args.rounds, args.gap, peers=not args.no_peers)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    print(table(report))


if __name__ == "__main__":
    main()
