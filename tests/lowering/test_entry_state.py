"""Every generated kernel entry clears the upper halves of the vector registers first
(cpp_prelude.h, dirty upper state). OpenBLAS's gemm kernels return with them in use, and
the legacy-SSE code a kernel then calls (glibc's cexp) paid a transition penalty on every
instruction: npbench's stockham_fft, complex exps after each complex matmul, ran at 0.23x
NumPy; with the entries clean, 2.1x."""
import re
import shutil
import subprocess

import numpy as np
import pytest

import kiln
from kiln.config import config
from kiln.runtime import cpp_backend


def _twiddled_transform(x, dft):
    y = dft @ x.reshape(2, -1)                         # OpenBLAS zgemm
    k = np.arange(y.shape[1])
    return np.exp(-2j * np.pi * k / y.shape[1]) * y    # then cexp in a kernel


def _element_loop(x, n):
    for i in range(1, n):
        x[i] = x[i - 1] * 0.5 + x[i]
    return x


def _entries(source: str) -> list[str]:
    """The first statement of each extern "C" function ``source`` defines, but the packed
    twins (they call their entry) and the prelude's own small functions."""
    found = re.findall(r'extern "C" [^\n]*?(\w+)\([^()]*\)\s*\{\s*\n?\s*([^\n]*)', source)
    return [first for name, first in found
            if not name.endswith("_packed") and not name.startswith(("kiln_team_now", "kiln_forked_child", "kiln_fp_owned"))]


@pytest.mark.parametrize("fn, args, module", [
    (_twiddled_transform, (np.exp(1j * np.arange(64.0)), np.exp(-1j * np.pi * np.eye(2))),
     "kernels.cpp"),
    (_element_loop, (np.linspace(-1, 1, 200), 200), "loops.cpp"),   # a C++ loop's entry
])
def test_every_kernel_entry_clears_the_upper_vector_state(fn, args, module, tmp_path, monkeypatch):
    monkeypatch.setattr(config, "debug_dir", str(tmp_path))
    compiled = kiln.compile(fn)
    copy = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    np.testing.assert_allclose(compiled(*copy), fn(*args), rtol=1e-13)
    sources = [p.read_text() for p in tmp_path.rglob("*.cpp")]
    assert any(tmp_path.rglob(module)), f"no {module} was built"
    firsts = [first for s in sources for first in _entries(s)]
    assert firsts and all(f.startswith("KILN_CLEAN_UPPER();") for f in firsts), firsts


def test_the_compiled_entry_executes_vzeroupper_first():
    cpu = open("/proc/cpuinfo").read()
    if shutil.which("objdump") is None or " avx " not in cpu.replace("\n", " ") \
            or "-march=native" not in config.cxx_flags:
        pytest.skip("needs objdump and an AVX CPU with kiln's default -march=native")
    seen = []

    def backend(graph, example_inputs):
        seen.append(cpp_backend(graph, example_inputs))
        return seen[-1]

    def f(z):
        return np.exp(z * 2)

    z = np.exp(1j * np.arange(32.0))
    np.testing.assert_allclose(kiln.compile(f, backend=backend)(z), f(z), rtol=1e-13)
    code = subprocess.run(["objdump", "-d", "--no-show-raw-insn", seen[0].kiln_artifact.so],
                          capture_output=True, text=True, check=True).stdout
    entries = [block for block in code.split("\n\n")
               if re.match(r"[0-9a-f]+ <kiln_fused_\w+_\d+>:", block)]
    assert entries, "no kernel entry symbol"
    for block in entries:
        # before anything it calls and before any vector instruction of its own
        ins = [line.split("\t")[-1].strip() for line in block.split("\n")[1:]]
        before = next(k for k, i in enumerate(ins) if i.startswith(("call", "jmp", "v")))
        assert ins[before].startswith("vzeroupper"), block[:600]
