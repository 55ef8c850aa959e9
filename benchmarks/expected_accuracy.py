"""How close is the expected performance of an engine profile to runs it was not fitted on?

Fits engine profiles (roofline_decode.measure.engine_profile) on part of the measured runs of
``tests/data/measured`` (copies of ``shared/reference/measured``) and predicts the rest:

* TensorRT-LLM, vLLM, SGLang (duplicate and data-error rows left out): fit on the H100 rows,
  predict the H200 rows, and the reverse (TPOT and TTFT); each model predicted from the other
  models (TPOT and TTFT); fit batch <= 8, predict the larger batches;
* llama.cpp (CUDA, Metal): fit on every other device by bandwidth, predict the others, and the reverse;
* HF eager: fit batch <= 8, predict the larger batches.

Prints per split: rows fitted / predicted, median, p90 and max of |predicted / measured - 1| and
the share of predicted rows inside the fit's 90 % band and its median width (upper / lower
end); then the shipped profiles' own leave-one-device-out (and, for the production engines, leave-one-model-out) figures.  Targets (issue 29): on unseen devices TPOT within 15 % median
(goal 7 %), TTFT within 25 %, band coverage >= 80 %.  No randomness: the figures are those of
docs/how_close_is_the_floor.md.

Run: ``python benchmarks/expected_accuracy.py [MEASURED_DIR]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from roofline_decode.measure.engine_profile import list_engine_profiles, load_engine_profile
from roofline_decode.measure.expected_accuracy import accuracy_protocol


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else Path(__file__).resolve().parents[1] / "tests" / "data" / "measured"
    print(f"{'engine':14s} {'quantity':8s} {'fit':>5s} {'pred':>5s} {'median':>8s} {'p90':>8s} {'max':>8s} {'band':>6s} {'width':>7s}  split")
    for r in accuracy_protocol(folder):
        print(f"{r.engine:14s} {r.quantity:8s} {r.fitted:5d} {r.predicted:5d} {r.median:8.1%} {r.p90:8.1%} "
              f"{r.max:8.1%} {r.coverage:6.0%} {r.width:6.2f}x  {r.split}")
    print("\nshipped profiles, leave-one-device-out (each device predicted from the others):")
    for name in list_engine_profiles():
        p = load_engine_profile(name)
        s = p.statistics
        ttft = ""
        if p.ttft:
            t = p.ttft["statistics"]
            ttft = (f"  | TTFT median {t['held_out_median']:.1%} (by model {t['held_out_model_median']:.1%}) band "
                    f"{t['held_out_coverage_90']:.0%}")
        by_model = (f"  | by model: median {s['held_out_model_median']:6.1%} band covers "
                    f"{s['held_out_model_coverage_90']:.0%}" if "held_out_model_median" in s else "")
        print(f"{name:16s} {p.rows:4d} rows {len(p.devices):2d} devices  median {s['held_out_median']:6.1%}  "
              f"p90 {s['held_out_p90']:6.1%}  band covers {s['held_out_coverage_90']:.0%}{by_model}{ttft}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
