// NumPy's pairwise summation (pairwise_sum in numpy/_core/src/umath/loops_utils.h.src),
// the order np.add.reduce adds a float64 run in: under 8 terms in order from 0; up to 128
// into 8 partial sums combined ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), the rest in order;
// longer runs split at n/2 rounded down to a multiple of 8. A sum reduced this way is
// NumPy's to the last bit. ``f(i)`` computes the i-th term (a fused expression).
// Up to 8 terms from ``at`` into ``out``, as SIMD lanes: lanes past ``last`` repeat the
// term at ``last`` (computed, never added), so a run's tail costs one vector call.
template <typename T, typename F> static inline void kiln_terms8(const F& f, int64_t at, int64_t last, T* out) {
    #pragma omp simd
    for (int j = 0; j < 8; j++) out[j] = f(at + j < last ? at + j : last);
}
// kiln_pairwise_block: one block of up to 128 terms (a leaf of kiln_pairwise's tree, or
// a whole short run), added as ``W`` says.
// ``W`` 16 (float32 terms that call vector math, cpp_stages.py): terms a 512-bit vector
// at a time, one vector call per 16 lanes, added as two blocks of 8 in order. ``W`` 0
// (terms that read a bool array beside wider values: a masked sum's where(m, x, 0)): a
// block's terms (up to 128) computed by one SIMD loop into a buffer, then added from it.
// GCC 12 vectorizes no 8-lane loop that loads bytes beside float64 or float32 when it
// prefers 256-bit vectors on an AVX-512 processor ("no vectype"): np.where(m, x, 0).sum()
// took 4x a plain sum's time, scalar. Elsewhere 8: through a buffer, a term that is a plain
// load (strided: x[:, ::2].sum()) stalled on the store-to-load forward, 5-6x slower than
// adding the loads straight into the partial sums.
// ``W`` 1 (terms that are loads strided along the run, cpp_sums.py strided_terms): the
// partial sums as 8 scalars (kiln's flags leave such code scalar), each term a scalar load:
// as SIMD lanes GCC gathers them, 4 float32 a gather (vgatherqps), which on this AMD
// EPYC took 1.6x the time (x[:, ::-2].sum(1) of 1000x2000 float32: 0.34 ms, NumPy 0.20).
template <typename T, int W, typename F> KILN_INLINE T kiln_pairwise_block(const F& f, int64_t lo, int64_t n) {
    if (n < 8) {   // a short run (a short row): only its own terms
        T res = 0;
        for (int64_t j = 0; j < n; j++) res += f(lo + j);
        return res;
    }
    if constexpr (W == 0) {   // terms through a buffer (see above): one SIMD loop computes them
        T t[128];
        #pragma omp simd
        for (int64_t j = 0; j < n; j++) t[j] = f(lo + j);
        T r[8];
        #pragma omp simd
        for (int j = 0; j < 8; j++) r[j] = t[j];
        const int64_t end = n - (n % 8);
        for (int64_t i = 8; i < end; i += 8) {
            #pragma omp simd
            for (int j = 0; j < 8; j++) r[j] += t[i + j];
        }
        T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (int64_t j = end; j < n; j++) res += t[j];
        return res;
    } else if constexpr (W == 2) {   // a kiln_sums's sums: each one's 8 partial sums SIMD lanes
        typename T::E r[T::N][8];
        #pragma omp simd
        for (int j = 0; j < 8; j++) { const T t = f(lo + j); for (int k = 0; k < T::N; k++) r[k][j] = t.v[k]; }
        int64_t i = 8;
        const int64_t end = n - (n % 8);
        for (; i < end; i += 8) {
            #pragma omp simd
            for (int j = 0; j < 8; j++) { const T t = f(lo + i + j); for (int k = 0; k < T::N; k++) r[k][j] += t.v[k]; }
        }
        T res;
        for (int k = 0; k < T::N; k++)
            res.v[k] = ((r[k][0] + r[k][1]) + (r[k][2] + r[k][3])) + ((r[k][4] + r[k][5]) + (r[k][6] + r[k][7]));
        for (; i < n; i++) res += f(lo + i);
        return res;
    } else if constexpr (W == 1) {   // strided loads (see above): the 8 partial sums as scalars
        T r0 = f(lo), r1 = f(lo + 1), r2 = f(lo + 2), r3 = f(lo + 3);
        T r4 = f(lo + 4), r5 = f(lo + 5), r6 = f(lo + 6), r7 = f(lo + 7);
        int64_t i = 8;
        const int64_t end = n - (n % 8);
        for (; i < end; i += 8) {
            r0 += f(lo + i); r1 += f(lo + i + 1); r2 += f(lo + i + 2); r3 += f(lo + i + 3);
            r4 += f(lo + i + 4); r5 += f(lo + i + 5); r6 += f(lo + i + 6); r7 += f(lo + i + 7);
        }
        T res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
        for (; i < n; i++) res += f(lo + i);
        return res;
    } else {
        T r[8];
        #pragma omp simd
        for (int j = 0; j < 8; j++) r[j] = f(lo + j);
        int64_t i = 8;
        const int64_t end = n - (n % 8);
        for (; W > 8 && i + W <= end; i += W) {
            T t[W];
            #pragma omp simd
            for (int j = 0; j < W; j++) t[j] = f(lo + i + j);
            for (int k = 0; k < W; k += 8) {
                #pragma omp simd
                for (int j = 0; j < 8; j++) r[j] += t[k + j];
            }
        }
        for (; i < end; i += 8) {
            #pragma omp simd
            for (int j = 0; j < 8; j++) r[j] += f(lo + i + j);
        }
        T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        if (i < n) {
            T t[8];
            kiln_terms8<T>(f, lo + i, lo + n - 1, t);
            for (int64_t j = 0; j < n - i; j++) res += t[j];
        }
        return res;
    }
}
// The tree over the blocks: a run of over 128 terms splits at n/2 rounded down to a
// multiple of 8, the left half's sum plus the right half's. Walked with a stack (one entry
// per level the walk is down: a right half still to sum, and its left half's sum once
// known) rather than by recursion: GCC inlined the recursive form into itself, a copy of
// ``f``'s block loop at each level (half the g++ time of a module with a sum). ``block(lo,
// n)`` sums a block; blocks are taken left to right, and each sum is added to its left
// neighbour's the moment both are known, as the recursion adds them.
template <typename T, typename B> KILN_INLINE T kiln_pairwise_tree(const B& block, int64_t lo, int64_t n) {
    int64_t right_lo[64], right_n[64];
    T left[64];
    bool left_known[64];
    int depth = 0;
    for (;;) {
        for (; n > 128; depth++) {
            int64_t half = n / 2;
            half -= half % 8;
            right_lo[depth] = lo + half; right_n[depth] = n - half; left_known[depth] = false;
            n = half;
        }
        T sum = block(lo, n);
        while (depth > 0 && left_known[depth - 1]) sum = left[--depth] + sum;
        if (depth == 0) return sum;
        left[depth - 1] = sum; left_known[depth - 1] = true;
        lo = right_lo[depth - 1]; n = right_n[depth - 1];
    }
}
template <typename T, int W = 8, typename F> static T kiln_pairwise(const F& f, int64_t lo, int64_t n) {
    return kiln_pairwise_tree<T>([&](int64_t at, int64_t m) { return kiln_pairwise_block<T, W>(f, at, m); }, lo, n);
}
// kiln_sums: the terms of K sums over one run, added side by side: kiln_pairwise's order
// depends on the run's length alone, so kiln_pairwise<kiln_sums<T, K>, 2> adds each of
// them in NumPy's order, to its bits, in one pass and one template instance (a stage of
// more sums than cpp_sums.py MAX_PAIRWISE_SUMS, each otherwise a pass and ~0.1 s of g++).
// (W 2: each sum's 8 partial sums are SIMD lanes; 10 sums of 1e6 float32 took 0.55 ms,
// NumPy's ten 15.9 ms; as scalars, W 1, 12 ms.)
template <typename T, int K> struct kiln_sums {
    using E = T;
    static constexpr int N = K;
    T v[K];
    kiln_sums() = default;
    kiln_sums(int) { for (int k = 0; k < K; k++) v[k] = 0; }
    kiln_sums operator+(const kiln_sums& o) const { kiln_sums r; for (int k = 0; k < K; k++) r.v[k] = v[k] + o.v[k]; return r; }
    kiln_sums& operator+=(const kiln_sums& o) { for (int k = 0; k < K; k++) v[k] += o.v[k]; return *this; }
};
// kiln_pairwise of the term function at ``f`` (a ``const F*``), through a plain function
// pointer: the threaded forms' scaffolding below (the splits, the parallel region, the
// adding of the parts) is compiled once per T, not once per term function: each copy cost
// as much g++ time as the sum itself (np.var's module of 5 sums: 0.42 -> 0.27 s).
template <typename T, int W, typename F> static T kiln_pairwise_at(const void* f, int64_t lo, int64_t n) {
    return kiln_pairwise<T, W>(*(const F*)f, lo, n);
}
// The same sum on threads: the tree's top levels cut into up to 8 subtrees (a level is cut
// only when all its runs are longer than 128), each summed on a thread, then combined
// level by level in the tree's order, so the result does not depend on the thread count.
template <typename T> __attribute__((noinline)) static T kiln_pairwise_subtrees(T (*sum)(const void*, int64_t, int64_t),
                                                                            const void* f, int64_t n, int nthreads) {
    int64_t lo[8], len[8];
    int k = 1;
    lo[0] = 0; len[0] = n;
    while (k * 2 <= nthreads && k * 2 <= 8) {
        bool long_runs = true;
        for (int j = 0; j < k; j++) long_runs = long_runs && len[j] > 128;
        if (!long_runs) break;
        for (int j = k - 1; j >= 0; j--) {
            const int64_t start = lo[j], m = len[j];
            int64_t h = m / 2;
            h -= h % 8;
            lo[2 * j] = start; len[2 * j] = h;
            lo[2 * j + 1] = start + h; len[2 * j + 1] = m - h;
        }
        k *= 2;
    }
    T s[8];
    unsigned fp = kiln_fp_take();   // the calling thread's flags so far, then its threads'
    const int64_t launched = kiln_now_us();
    #pragma omp parallel num_threads(k) reduction(|:fp)
    {
        kiln_arrived(launched);
        #pragma omp for schedule(dynamic, 1)
        for (int j = 0; j < k; j++) { kiln_fp_take(); s[j] = sum(f, lo[j], len[j]); fp |= kiln_fp_take(); }
    }
    kiln_fp_put(fp);
    for (; k > 1; k /= 2)
        for (int j = 0; j < k / 2; j++) s[j] = s[2 * j] + s[2 * j + 1];
    return s[0];
}
template <typename T, int W = 8, typename F> static T kiln_pairwise_threads(const F& f, int64_t n, int nthreads) {
    if (nthreads < 2 || n <= 128) return kiln_pairwise<T, W>(f, 0, n);   // no parallel region
    return kiln_pairwise_subtrees<T>(kiln_pairwise_at<T, W, F>, &f, n, nthreads);
}
// NumPy's sum of terms cast to T on the way (np.add.reduce with dtype=, the mean of ints):
// its iterator casts a run through a buffer of 8192 terms, adds each buffer pairwise in T,
// and the buffers' sums into the result in order. On threads, up to 64 buffers at a time
// are summed side by side, then added in order: the same bits on any thread count. ``B``:
// another buffer (a whole number of the run's rows that do not coalesce, reduce_order.py).
// kiln_pairwise_chunks: the same on the calling thread (what a sum too small for threads
// calls, without the parallel region GCC would outline and compile for nothing).
template <typename T, int W = 8, typename F> static T kiln_pairwise_chunks(const F& f, int64_t n, int64_t B = 8192) {
    T res = 0;
    for (int64_t lo = 0; lo < n; lo += B) res += kiln_pairwise<T, W>(f, lo, n - lo < B ? n - lo : B);
    return res;
}
template <typename T> __attribute__((noinline)) static T kiln_pairwise_buffers(T (*sum)(const void*, int64_t, int64_t),
                                                                           const void* f, int64_t n, int nthreads, int64_t B) {
    T res = 0;
    T s[64];
    unsigned fp = kiln_fp_take();   // (as kiln_pairwise_threads)
    for (int64_t first = 0; first < n; first += 64 * B) {
        const int64_t count = (n - first + B - 1) / B < 64 ? (n - first + B - 1) / B : 64;
        const int64_t launched = kiln_now_us();
        #pragma omp parallel num_threads(nthreads) reduction(|:fp)
        {
            kiln_arrived(launched);
            kiln_fp_take();
            #pragma omp for schedule(static)
            for (int64_t j = 0; j < count; j++) {
                const int64_t lo = first + j * B;
                s[j] = sum(f, lo, n - lo < B ? n - lo : B);
            }
            fp |= kiln_fp_take();
        }
        for (int64_t j = 0; j < count; j++) res += s[j];
    }
    kiln_fp_put(fp);
    return res;
}
template <typename T, int W = 8, typename F> static T kiln_pairwise_buffered(const F& f, int64_t n, int nthreads,
                                                                             int64_t B = 8192) {
    if (nthreads < 2 || n <= 2 * B) return kiln_pairwise_chunks<T, W>(f, n, B);
    return kiln_pairwise_buffers<T>(kiln_pairwise_at<T, W, F>, &f, n, nthreads, B);
}
// x[mask].sum() as NumPy adds it: the selection compacted (C order) into a scratch buffer by
// the kernel, then added pairwise over its own count as kiln_pairwise adds a run (buffered:
// terms cast from another dtype, a buffer of 8192 at a time). On one thread, as NumPy's, and
// at -O2: the same sum of a plain buffer, without kiln_pairwise's term-function variants,
// compiled in about half the time (each kernel builds its own; -O3's unrolled versions of
// it took ~0.1 s of g++ per kernel).
static inline void* kiln_scratch(int64_t bytes) { return malloc(bytes > 0 ? (size_t)bytes : 1); }
template <typename T> __attribute__((optimize("O2"))) static T kiln_pairwise_of_block(const T* a, int64_t n) {
    if (n < 8) {
        T res = 0;
        for (int64_t j = 0; j < n; j++) res += a[j];
        return res;
    }
    T r[8];
    for (int j = 0; j < 8; j++) r[j] = a[j];
    const int64_t end = n - (n % 8);
    int64_t i = 8;
    for (; i < end; i += 8)
        for (int j = 0; j < 8; j++) r[j] += a[i + j];
    T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; i++) res += a[i];
    return res;
}
template <typename T> __attribute__((optimize("O2"))) static T kiln_pairwise_of(const T* a, int64_t n) {
    return kiln_pairwise_tree<T>([a](int64_t lo, int64_t m) { return kiln_pairwise_of_block<T>(a + lo, m); }, 0, n);
}
template <typename T, bool Buffered> static T kiln_pairwise_run(const T* a, int64_t n) {
    if (!Buffered) return kiln_pairwise_of<T>(a, n);
    const int64_t B = 8192;
    T res = 0;
    for (int64_t lo = 0; lo < n; lo += B) res += kiln_pairwise_of<T>(a + lo, n - lo < B ? n - lo : B);
    return res;
}
// One run of ``n`` elements, its selected terms taken in order (``sel(i)``: whether the
// i-th is selected, ``f(i)``: the term): counted first (a SIMD loop), then added in the tree
// kiln_pairwise_of adds their compacted array in, each leaf (up to 128 terms) gathered into
// a stack buffer as the tree reaches it, so no array of the selection is made (a 1e7 one
// cost 40 MB of fresh pages: 3.4 ns per element against 0.4 at 1e5). A block's mask is
// computed by one SIMD loop into bytes; runs of zero bytes are skipped 8 at a time, and
// each term stored where the next goes, the store advanced where the mask holds (no
// branch per element).
template <typename T, typename S, typename F> struct kiln_selection {
    const S& sel;
    const F& f;
    const int64_t n;
    uint8_t s[1024];
    int64_t lo = 0, m = 0, j = 0;   // the block of the mask in s: [lo, lo + m), the next at j
    kiln_selection(const S& sel_, const F& f_, int64_t n_) : sel(sel_), f(f_), n(n_) {}
    // The mask of the block from ``at`` as bytes into a local ``t`` (bytes stored into a
    // member may alias anything, the lambdas' captures too: that loop stayed scalar).
    int64_t bytes(uint8_t* t, int64_t at) const {
        const int64_t len = n - at < 1024 ? n - at : 1024;
        #pragma omp simd
        for (int64_t q = 0; q < len; q++) t[q] = sel(at + q) ? 1 : 0;
        return len;
    }
    void block(int64_t at) {
        uint8_t t[1024];
        m = bytes(t, at);
        __builtin_memcpy(s, t, (size_t)m);
        lo = at;
        j = 0;
    }
    int64_t count() const {   // (bytes summed 8 at a time: an int64 count of a byte loop stays scalar)
        int64_t c = 0;
        uint8_t t[1024];
        for (int64_t at = 0; at < n; at += 1024) {
            const int64_t len = bytes(t, at);
            int64_t q = 0;
            for (uint64_t w; q + 8 <= len; q += 8) {
                __builtin_memcpy(&w, t + q, 8);
                c += (int64_t)((w * 0x0101010101010101ull) >> 56);
            }
            for (; q < len; q++) c += t[q];
        }
        return c;
    }
    void take(T* out, int64_t want) {   // the next ``want`` selected terms, in order
        while (want > 0) {
            if (j == m) block(lo + m);
            uint64_t w = 0;
            for (; j + 8 <= m; j += 8) {
                __builtin_memcpy(&w, s + j, 8);
                if (w != 0) break;
            }
            if (j + 8 <= m && want >= 8) {   // a word with room for all its terms
                // (its 8 terms computed by one SIMD loop, then compacted: a term calling a
                // vector function, NumPy's exp, took a scalar call per element, 1.5x NumPy)
                T v[8];
                #pragma omp simd
                for (int q = 0; q < 8; q++) v[q] = f(lo + j + q);
                const T* first = out;
                for (int q = 0; q < 8; q++) { *out = v[q]; out += s[j + q]; }
                want -= out - first;
                j += 8;
                continue;
            }
            const int64_t stop = j + 8 < m ? j + 8 : m;   // (the last terms of a leaf, the tail)
            for (; j < stop && want > 0; j++) {
                *out = f(lo + j);
                out += s[j];
                want -= s[j];
            }
        }
    }
};
// (Recursive, not kiln_pairwise_tree: that walk, inlined with take() into kiln_selected_sum,
// took 1.1-1.6x this form's g++ time: the modules of test_selection_sums.py.)
template <typename T, typename Src> static T kiln_pairwise_taken(Src& src, int64_t n) {
    if (n <= 128) {
        T t[128];
        src.take(t, n);
        return kiln_pairwise_of_block<T>(t, n);
    }
    int64_t n2 = n / 2;
    n2 -= n2 % 8;
    const T left = kiln_pairwise_taken<T>(src, n2);   // (the left subtree's terms first)
    return left + kiln_pairwise_taken<T>(src, n - n2);
}
// x[mask].sum() of one run: NumPy's sum of the compacted selection (buffered: terms cast
// from another dtype, NumPy's buffers of 8192 each added pairwise, in order); the count of
// the selection is added into ``count`` where one is given (x[mask].mean()'s divisor)
template <typename T, bool Buffered, typename S, typename F> static T kiln_selected_sum(const S& sel, const F& f, int64_t n,
                                                                                       int64_t* count = nullptr) {
    kiln_selection<T, S, F> src(sel, f, n);
    const int64_t k = src.count();
    if (count) *count += k;
    if (!Buffered) return kiln_pairwise_taken<T>(src, k);
    const int64_t B = 8192;
    T res = 0;
    for (int64_t lo = 0; lo < k; lo += B) res += kiln_pairwise_taken<T>(src, k - lo < B ? k - lo : B);
    return res;
}

