"""Print how long the deployment search takes: DeepSeek-V3 on 8, 16, 32, 64 and 72 H200s.

For each GPU count: the layouts the model takes (candidates), those whose weights and one
sequence fit, the points searched, the frontier's size, and the best of three wall-clock
times of ``rd.planning.deployments`` (ISL = OSL = 1024, TTFT <= 2 s, TPOT <= 50 ms).
AIConfigurator's search of a comparable space takes about 30 s.  Usage:
``python benchmarks/deploy_search.py [model] [device]``.  Asserts nothing.
"""

from __future__ import annotations

import sys
import time

from roofline_decode.planning import deployments


def main() -> int:
    model = sys.argv[1] if len(sys.argv) > 1 else "deepseek-v3"
    device = sys.argv[2] if len(sys.argv) > 2 else "h200-sxm"
    deployments(model, device, 8, 1024, 1024)  # imports and caches once
    print(f"{model} on {device}, ISL 1024, OSL 1024, TTFT <= 2 s, TPOT <= 50 ms")
    print(f"{'GPUs':>5} {'candidates':>10} {'fit':>5} {'points':>10} {'frontier':>8} {'best of 3 s':>11}")
    for gpus in (8, 16, 32, 64, 72):
        times = []
        for _ in range(3):
            start = time.perf_counter()
            result = deployments(model, device, gpus, 1024, 1024, ttft=2.0, tpot=0.05)
            times.append(time.perf_counter() - start)
        print(f"{gpus:>5} {result.candidates:>10} {len(result.layouts):>5} {result.evaluated:>10,} "
              f"{len(result.frontier()):>8} {min(times):>11.2f}")
        print(f"      {result.answer()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
