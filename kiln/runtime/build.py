"""Build C++ sources into shared libraries, cached on disk across processes.

The key of a library is the SHA-256 of its source (less its whole-line comments:
:func:`code_of`), the compiler's identity (path and ``--version``), the full flag list
and the CPU's feature flags, so a change to any of them builds anew. Files live in
``<cache_dir>/kernels/<key[:2]>/<key>.so``, next to
``<key>.sha256`` (the library's own checksum: a truncated or corrupted library is
detected and rebuilt). A build holds an exclusive ``flock`` on ``<key>.lock``, compiles
into a temporary file in the same directory and ``os.replace``s it into place, so
processes compiling the same kernel at once build it once and never see half a file.
"""
from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import shlex
import time
from typing import Callable, Iterable

from ..config import config
from ..errors import KilnError


class CompilerUnavailable(KilnError):
    """No working C++ compiler (missing binary, or it cannot build a trivial kernel)."""


class BuildError(KilnError):
    """The compiler rejected generated code: a kiln bug (the log names the source file)."""


# Counters tests and benchmarks read: builds run by this process, library cache hits,
# whole-graph artifact hits (kiln/runtime/artifacts.py: no lowering, no build).
stats = {"builds": 0, "disk_hits": 0, "artifact_hits": 0, "build_seconds": 0.0}

# -ffp-contract=off: no fused multiply-adds, so a*x + b*y rounds twice, as NumPy does
# (GCC contracts by default: results 1 ulp off NumPy's).
# -fno-exceptions: generated code throws nothing; without it every OpenMP parallel region
# gets a must-not-throw cleanup that references libstdc++'s __gxx_personality_v0, which
# the link below does not take (LINK_LIBS).
# -fno-tree-slp-vectorize: GCC 12's straight-line (SLP) vectorizer miscompiled a fully
# unrolled 4x4 kernel reading through a transpose with 512-bit vectors (AVX-512, -O3:
# one element of `x.T * x` wrong; fuzzer seed 9920, docs/fuzzing.md). Loops still
# vectorize (the loop vectorizer is a separate pass): W1-W7 measured within noise without
# SLP, against 1.3-1.75x slower on W1, W2 and W5 with -mprefer-vector-width=256.
# -fwrapv: NumPy's integers wrap on overflow; in C++ a signed overflow is undefined, and
# GCC uses that: np.negative(x).max() of an int32 array holding INT32_MIN was rewritten
# as -min(x) and gave INT32_MIN, not NumPy's wrapped answer.
# -pipe: the compiler hands its assembly to the assembler through a pipe, not a file in
# /tmp (~1-3 ms of a ~75 ms build of a small module).
BASE_FLAGS = ["-pipe", "-shared", "-fPIC", "-std=c++17", "-fno-math-errno", "-fno-trapping-math",
              "-ffp-contract=off", "-fno-tree-slp-vectorize", "-fno-semantic-interposition",
              "-fno-exceptions", "-fwrapv", "-w"]
# The libraries a kernel module links, after its source. Generated code uses no libstdc++
# (the prelude includes only stdint.h and omp.h), and the driver's default list starts
# with -lstdc++, whose symbol table the linker reads for nothing: naming libm, libc and
# libgcc alone makes the link ~14 ms faster (~35 -> ~21 ms CPU of ~120 ms for a softmax,
# loaded; docs/lowering.md). -fopenmp still adds -lgomp. --no-undefined turns a symbol
# none of them defines into a build error here, not a failure to load the library later.
# -fno-use-linker-plugin: no LTO here, so the linker need not load GCC's LTO plugin and
# run its resolution pass (~4 ms of a ~20 ms link).
LINK_LIBS = ["-nodefaultlibs", "-lm", "-lc", "-lgcc", "-Wl,--no-undefined", "-fno-use-linker-plugin"]


def _split(setting: str, value: str) -> list[str]:
    try:
        words = shlex.split(value)
    except ValueError as e:
        raise KilnError(f"{setting} = {value!r} cannot be split into words ({e}); fix its "
                        f"quoting") from None
    if not words and setting.startswith("KILN_CXX "):
        raise CompilerUnavailable(f"{setting} is empty")
    return words


def flags() -> list[str]:
    from ..lowering.cpp_ops import no_builtin_flags
    user = _split("KILN_CXX_FLAGS (kiln.config.cxx_flags)", config.cxx_flags)
    if "-ffast-math" in user:
        raise KilnError("kiln.config.cxx_flags contains -ffast-math, which breaks NumPy's NaN, "
                        "inf and signed-zero semantics; remove it")
    return BASE_FLAGS + user + no_builtin_flags()


@functools.lru_cache(maxsize=8)
def compiler_id(cxx: str) -> str:
    """The first line of ``cxx --version``. Running it costs a process (~10 ms, a third of
    a warm-cache first call), so the answer is kept on disk under the identity of every
    executable the command names (path, size, mtime, inode: an upgraded or switched
    compiler is asked again)."""
    words = _split("KILN_CXX (kiln.config.cxx)", cxx)

    def ask() -> str:
        import subprocess
        try:
            out = subprocess.run(words + ["--version"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError, IndexError) as e:
            raise CompilerUnavailable(f"C++ compiler {cxx!r} cannot run ({e})") from None
        if out.returncode != 0:
            raise CompilerUnavailable(f"C++ compiler {cxx!r} failed: {out.stderr.strip()[:200]}")
        return out.stdout.splitlines()[0] if out.stdout else cxx

    stamp = _executables_stamp(words)
    return ask() if stamp is None else remembered("compilers", "\0".join([cxx, *stamp]), ask)


def remembered(folder: str, stamp: str, compute: Callable[[], str]) -> str:
    """``compute()``'s answer, kept in ``<cache_dir>/<folder>/`` under a hash of ``stamp``
    (what the answer depends on) for later processes; computed again where the cache
    cannot be read or written."""
    path = os.path.join(config.cache_dir, folder, hashlib.sha256(stamp.encode()).hexdigest())
    try:
        with open(path) as f:
            known = f.read()
        if known:
            return known
    except OSError:
        pass
    answer = compute()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        _atomic_write(path, answer.encode())
    except OSError:
        pass
    return answer


def _executables_stamp(words: list[str]) -> list[str] | None:
    """Path, size, mtime and inode of each word that is an executable on PATH (``ccache
    g++``: both); None when the first word is none (nothing to key a stored answer on)."""
    stamp = []
    for i, word in enumerate(words):
        found = _which(word)
        if found is None:
            if i == 0:
                return None
            continue
        try:
            stamp.append(file_stamp(os.path.realpath(found)))
        except OSError:
            return None
    return stamp


def _which(word: str) -> str | None:
    """``shutil.which(word)`` without importing shutil (~2-4 ms, with bz2 and lzma, of a
    process that finds everything it needs in the cache)."""
    if os.sep in word:
        return word if os.path.isfile(word) and os.access(word, os.X_OK) else None
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(folder or os.curdir, word)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def file_stamp(path: str) -> str:
    """What changes when a file is replaced or edited: path, size, mtime, inode."""
    st = os.stat(path)
    return f"{path}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


@functools.lru_cache(maxsize=1)
def cpu_features() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return hashlib.sha256(line.encode()).hexdigest()[:16]
    except OSError:
        pass
    import platform
    return platform.machine()


def library_key(source: str, *support: str) -> str:
    cxx = config.cxx
    h = hashlib.sha256()
    for part in (source, *support, cxx, compiler_id(cxx), " ".join(flags() + LINK_LIBS), cpu_features()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def code_of(source: str) -> str:
    """``source`` without its whole-line ``//`` comments: what a library is keyed on. The
    comments name the graph and quote the user's source lines (file:line), which change
    no instruction: the same kernel written by another function, or by the same one after
    an edit above it moved its lines, loads the library built before (stop 59's 3.11
    suite built 235 of its 7,294 modules a second time for a comment; an edit at the top of a file
    rebuilt every kernel below it). A line is dropped only where it is a whole logical
    line of comment: not one a backslash continues onto the next line or from the last
    (the compiler joins those first); the full text where it holds a raw string literal
    (whose lines are data)."""
    if 'R"' in source:
        return source
    lines = source.split("\n")
    return "\n".join(line for i, line in enumerate(lines)
                     if not line.lstrip().startswith("//") or line.endswith("\\")
                     or i > 0 and lines[i - 1].endswith("\\"))


def _digest(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def _valid(so: str) -> bool:
    try:
        with open(so + ".sha256") as f:
            expected = f.read().strip()
    except OSError:
        return False
    return bool(expected) and _digest(so) == expected


def build(source: str, name_hint: str = "kernels", units: Callable[[], list] | None = None,
          support: tuple[str, ...] = ()) -> str:
    """Path of the shared library built from ``source`` (from the cache when present).
    ``units``: when it must be compiled, the same module as translation units
    (lowering/cpp.py ``module_units``); several are compiled in parallel and linked
    together. The key is ``source``'s either way. ``support``: the sources of objects
    the library links (:func:`support_object`), part of the key."""
    key = library_key(code_of(source), *support)
    folder = os.path.join(config.cache_dir, "kernels", key[:2])

    def make(so: str) -> None:
        extra = _SupportObjects(support)   # (compiled meanwhile: the link waits for them)
        try:
            _compile(source, folder, key, so, units() if units else [], extra)
        finally:
            extra.close()
    so, hit = _cached(folder, key, ".so", make)
    if hit:
        stats["disk_hits"] += 1
    return so


def _cached(folder: str, key: str, suffix: str, make: Callable[[str], None]) -> tuple[str, bool]:
    """``(<folder>/<key><suffix>, whether it was there)``: made by ``make(path)`` unless a
    valid one (its checksum matches) is there, under an exclusive ``flock`` on
    ``<key>.lock``, so processes making the same file at once make it once."""
    path = os.path.join(folder, key + suffix)
    if _valid(path):
        return path, True
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, key + ".lock"), "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if _valid(path):  # another process made it while we waited
                return path, True
            make(path)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return path, False


def _atomic_write(path: str, data: bytes) -> None:
    import tempfile
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def support_object(support: str) -> str:
    """The object file compiled from ``support`` (lowering/cpp_text.py ``support_sources``:
    parts of kernel modules that do not change: the base every module links, each of
    NumPy's vector math functions a module calls), built once per compiler, flags and CPU
    and kept in ``<cache_dir>/support/`` like a library: a module links it instead of
    compiling its own copy (the base: ~13 ms of a small module's ~60 ms compile)."""
    import subprocess
    key = library_key(support)
    folder = _support_folder()

    def make(obj: str) -> None:
        cpp = os.path.join(folder, key + ".cpp")
        _atomic_write(cpp, support.encode())
        tmp = _temporary(folder, ".o")
        cxx = _split("KILN_CXX (kiln.config.cxx)", config.cxx)
        _install(tmp, obj, cpp, lambda: ("", subprocess.run(cxx + flags() + ["-c", cpp, "-o", tmp],
                                                            capture_output=True, text=True, timeout=600)))
    return _cached(folder, key, ".o", make)[0]


def _support_folder() -> str:
    return os.path.join(config.cache_dir, "support")


class _SupportObjects:
    """The paths of :func:`support_object` for ``sources``, those not in the cache compiled
    in threads (one g++ each) while the module's own units compile; iterating waits for
    them (the link), and raises what a build raised. A first float32 softmax's kernel
    compiles beside NumPy's float32 exp (~0.3 s); a module calling 20 of NumPy's SVML
    functions builds their objects at once."""

    def __init__(self, sources: tuple[str, ...]) -> None:
        self._paths = [os.path.join(_support_folder(), library_key(text) + ".o") for text in sources]
        missing = [text for text, path in zip(sources, self._paths) if not _valid(path)]
        self._pool = None
        if missing:   # (no thread where all are there: most builds)
            from concurrent.futures import ThreadPoolExecutor
            self._pool = ThreadPoolExecutor(max_workers=max(1, min(len(missing), config.num_threads)))
            self._futures = [self._pool.submit(support_object, text) for text in missing]

    def __iter__(self):
        if self._pool is not None:
            for future in self._futures:
                future.result()
        return iter(self._paths)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)


def _temporary(folder: str, suffix: str) -> str:
    import tempfile
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=suffix)
    os.close(fd)
    return tmp


def _install(tmp: str, path: str, cpp: str, run: Callable[[], tuple]) -> None:
    """Run the compiler into ``tmp`` (``run()``: ``(what failed, the process's result)``),
    then move it to ``path`` next to its checksum; a compiler that cannot run is
    :class:`CompilerUnavailable`, one that fails a :class:`BuildError` naming ``cpp``."""
    import subprocess
    try:
        failed, out = run()
    except (OSError, subprocess.SubprocessError) as e:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise CompilerUnavailable(f"C++ compiler {config.cxx!r} cannot run ({e})") from None
    if out.returncode != 0:
        with contextlib.suppress(FileNotFoundError):   # the linker removes its failed output
            os.unlink(tmp)
        raise BuildError(f"g++ failed on {cpp}{failed}:\n{out.stderr[-4000:]}")
    digest = _digest(tmp)
    os.replace(tmp, path)
    _atomic_write(path + ".sha256", digest.encode())


def _compile(source: str, folder: str, key: str, so: str, units: list[str],
             extra: Iterable[str] = ()) -> None:
    import subprocess
    cpp = os.path.join(folder, key + ".cpp")
    _atomic_write(cpp, source.encode())
    tmp = _temporary(folder, ".so")
    cxx = _split("KILN_CXX (kiln.config.cxx)", config.cxx)
    direct = link_command(cxx)

    def run() -> tuple:
        if len(units) > 1:
            return _compile_units(cxx, units, folder, tmp, direct, extra=extra)
        if direct is not None:
            return _compile_units(cxx, [cpp], folder, tmp, direct, in_place=True, extra=extra)
        return "", subprocess.run(cxx + flags() + [cpp, *extra] + LINK_LIBS + ["-o", tmp],
                                  capture_output=True, text=True, timeout=600)
    start = time.perf_counter()
    try:
        _install(tmp, so, cpp, run)
    finally:
        stats["build_seconds"] += time.perf_counter() - start
    stats["builds"] += 1


def _compile_units(cxx: list[str], units: list[str], folder: str, tmp: str,
                   direct: list[str] | None, in_place: bool = False, extra: Iterable[str] = ()) -> tuple:
    """Compile ``units`` to objects at once (one process each), then link them and the
    objects ``extra`` (iterated at the link: :class:`_SupportObjects` waits) into ``tmp``:
    ``(what failed, the failing or the linking process's result)``. ``in_place``:
    ``units`` are the paths of sources already written, not their text."""
    import shutil
    import subprocess
    import tempfile
    work = tempfile.mkdtemp(dir=folder, prefix=".tmp-")
    try:
        procs = []
        objects = []
        for i, unit in enumerate(units):
            path = unit if in_place else os.path.join(work, f"part{i}.cpp")
            if not in_place:
                with open(path, "w") as f:
                    f.write(unit)
            objects.append(os.path.join(work, f"part{i}.o"))
            procs.append(subprocess.Popen(cxx + flags() + ["-c", path, "-o", objects[-1]],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
        results = []
        for proc in procs:
            try:
                _, err = proc.communicate(timeout=600)
            except subprocess.TimeoutExpired:
                for p in procs:
                    p.kill()
                raise
            results.append(subprocess.CompletedProcess(proc.args, proc.returncode, "", err))
        for i, result in enumerate(results):
            if result.returncode != 0:
                return (f" (translation unit {i + 1} of {len(units)})" if len(units) > 1 else ""), result
        return "", _link(cxx, objects + list(extra), tmp, direct)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _link(cxx: list[str], objects: list[str], out: str, direct: list[str] | None):
    """Link ``objects`` into the shared library ``out`` (the process's result): with
    ``direct``, the linker's own command line (:func:`link_command`), else the driver. A
    direct link that fails where the driver's succeeds is not tried again."""
    import subprocess
    if direct is not None:
        at = direct.index(_OBJECTS)
        cmd = [out if word == _OUTPUT else word for word in direct[:at] + objects + direct[at + 1:]]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if result.returncode == 0:
            return result
    driver = subprocess.run(cxx + flags() + objects + LINK_LIBS + ["-o", out],
                            capture_output=True, text=True, timeout=600)
    if direct is not None and driver.returncode == 0:
        _direct_link_failed.add(" ".join(cxx))
    return driver


# Placeholders in the remembered link command: where the objects and the output go.
_OBJECTS, _OUTPUT = "kiln-objects.o", "kiln-output.so"
_direct_link_failed: set[str] = set()


def link_command(cxx: list[str]) -> list[str] | None:
    """The command GCC's driver would link a kernel module with (``g++ -###``: the
    collect2 line), run by gold where this machine has ``ld.gold``, or None (another
    compiler, a user's ``-fuse-ld=``, no gold, a plugin): link through the driver. Going
    around the driver and collect2 (two processes) and linking with gold, which reads
    libc's and libm's symbol tables faster than ld.bfd, takes a kernel's link from ~19 to
    ~10 ms CPU (~8% of a small module's whole build; docs/lowering.md). Kept on disk
    under the compiler's identity and the flags (:func:`remembered`)."""
    key = " ".join(cxx)
    if key in _direct_link_failed:
        return None
    stamp = _executables_stamp(cxx)
    gold = _which("ld.gold")
    if stamp is None or gold is None or any(f.startswith("-fuse-ld") for f in flags()):
        return None
    import json
    answer = remembered("linkers", "\0".join([key, *stamp, file_stamp(gold), *flags(), *LINK_LIBS]),
                        lambda: json.dumps(_ask_link_command(cxx, gold)))
    return json.loads(answer)


def _ask_link_command(cxx: list[str], gold: str) -> list[str] | None:
    import shlex
    import subprocess
    try:
        dry = subprocess.run(cxx + flags() + ["-###", _OBJECTS] + LINK_LIBS + ["-o", _OUTPUT],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [line for line in dry.stderr.splitlines() if line.startswith(" ")]
    if dry.returncode != 0 or not lines:
        return None
    words = shlex.split(lines[-1])
    if (os.path.basename(words[0]) != "collect2" or words.count(_OBJECTS) != 1
            or _OUTPUT not in words or any("plugin" in w or "lto" in w for w in words[1:])):
        return None
    return [gold] + words[1:]


class CppLoader:
    """The C++ renderer's runtime half (``CppRenderer.loader``): builds the module with
    :func:`build` (g++, on-disk cache); the wrapper's prelude loads the library with
    cffi (kiln/runtime/loader.py), so there is nothing to install afterwards."""

    language = "C++"
    kernels_file = "kernels.cpp"

    def __init__(self, renderer: object) -> None:
        self.renderer = renderer
        self.builds = 0

    def build(self, gen: object, graph_name: str) -> str:
        """The module built (or found in the cache); returns the library's path."""
        from ..lowering.cpp import module_units
        from ..lowering.cpp_text import support_sources
        before = stats["builds"]
        # several translation units, built in parallel, where the kernels are many or long
        path = build(gen.cpp, units=lambda: module_units(graph_name, gen.kernels, config.num_threads),
                     support=support_sources([k.source for k in gen.kernels]))
        self.builds = stats["builds"] - before
        return path

    def install(self, module: object, gen: object) -> None:
        """Bind what the wrapper module needs after it ran (nothing: cffi loads it)."""
