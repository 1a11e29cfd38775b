"""Growth of the work hostile inputs cause (issue 15), at two sizes each, against a process floor.

Run: ``python benchmarks/hostile_growth.py [--repeat N]``.  For each case it builds the input
in a temporary directory, then times the whole ``apxtui`` process (imports and exit
included; min / median of N runs) at a small and a 4× larger size, beside the floor
(``apxtui --version``) measured in the same run.  Linear work shows a (time − floor) ratio
near 4; the quadratic versions these cases came from showed ~16.

Cases: a Rust function of many calls in loops bounded by its own constants (trace);
an index naming many missing shards; a header with a shape of many dimensions
(refused at once); a sparse Cargo.toml far over the manifest limit (one ``stat``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _apxtui(*argv: str, cache: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "APXTUI_CACHE_DIR": str(cache)}
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "apxtui", *argv], env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t


def long_function(d: Path, n: int) -> list[str]:
    (d / "src").mkdir(parents=True)
    (d / "Cargo.toml").write_text('[package]\nname = "longfn"\n')
    body = "\n".join(f"    let a{i} = {i};\n    for _ in 0..a{i} {{ g{i % 50}(a{i}); }}" for i in range(n))
    fns = "\n".join(f"fn g{i}(x: u32) {{}}" for i in range(50))
    (d / "src/lib.rs").write_text(f"{fns}\npub fn f() {{\n{body}\n}}\n")
    return ["trace", str(d), "--from", "f", "--format", "text"]


def missing_shards(d: Path, n: int) -> list[str]:
    d.mkdir()
    head = json.dumps({"t0": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}}).encode()
    (d / "s0.safetensors").write_bytes(struct.pack("<Q", len(head)) + head + b"\0" * 4)
    wmap = {f"t{i}": f"s{i}.safetensors" for i in range(n)}
    (d / "model.safetensors.index.json").write_text(json.dumps({"weight_map": wmap}))
    return ["checkpoint", str(d)]


def huge_shape(d: Path, n: int) -> list[str]:
    d.mkdir()
    head = ('{"w":{"dtype":"BF16","shape":[' + ",".join(["3"] * n) + '],"data_offsets":[0,2]}}').encode()
    (d / "model.safetensors").write_bytes(struct.pack("<Q", len(head)) + head + b"\0\0")
    return ["checkpoint", str(d)]


def sparse_manifest(d: Path, n: int) -> list[str]:
    (d / "src").mkdir(parents=True)
    (d / "Cargo.toml").write_text('[package]\nname = "big"\n')
    os.truncate(d / "Cargo.toml", n * 1024 * 1024)  # n MiB, sparse: no disk used
    (d / "src/lib.rs").write_text("pub fn f() {}\n")
    return ["index", str(d), "--no-cache"]


CASES: list[tuple[str, Callable[[Path, int], list[str]], int]] = [
    ("trace of a function with N calls", long_function, 1000),
    ("index naming N missing shards", missing_shards, 10_000),
    ("header shape of N dimensions", huge_shape, 250_000),
    ("sparse Cargo.toml of N MiB", sparse_manifest, 256),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="apxtui-hostile-") as tmp:
        base = Path(tmp)
        cache = base / "cache"
        floor = [_apxtui("--version", cache=cache) for _ in range(args.repeat)]
        print(f"floor (apxtui --version): min {min(floor):.2f} s, median {statistics.median(floor):.2f} s")
        for name, make, n in CASES:
            row = []
            for size in (n, 4 * n):
                argv = make(base / f"{make.__name__}-{size}", size)
                _apxtui(*argv, cache=cache)  # warm the fact cache where there is one
                runs = [_apxtui(*argv, cache=cache) for _ in range(args.repeat)]
                row.append((size, min(runs), statistics.median(runs)))
            (s, smin, smed), (big, bmin, bmed) = row
            over = smin - min(floor)
            ratio = f"(time − floor) ratio {(bmin - min(floor)) / over:.1f} for 4× N" if over > 0.2 else \
                "both within 0.2 s of the floor"
            print(f"{name}: N={s:,} min {smin:.2f} s median {smed:.2f} s; N={big:,} min {bmin:.2f} s "
                  f"median {bmed:.2f} s; {ratio}")


if __name__ == "__main__":
    main()
