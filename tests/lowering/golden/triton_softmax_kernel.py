

# kiln_fused_max_subtract_exp_sum_0
#   ops: 
#   iterates 8 x 100, reducing axes [1], persistent (one tile per row); int32 indexing
@triton.jit
def kiln_fused_max_subtract_exp_sum_0(p_x, p_buf3, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
    xnumel = 8
    rnumel = 100
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    rbase = tl.arange(0, RBLOCK)[None, :]
    x0 = xindex
    rindex = rbase
    rmask = rindex < rnumel
    r1 = rindex
    tmp0 = tl.load(p_x + r1 + 100*x0, xmask & rmask, other=0)
    tmp1 = tl.broadcast_to(tl.where(rmask, tmp0, float('-inf')), [XBLOCK, RBLOCK])
    tmp2 = tl.reduce(tmp1, 1, kiln_max)[:, None]
    tmp3 = tmp0 - tmp2
    tmp4 = libdevice.exp(tmp3)
    tmp5 = tmp4.to(tl.float64)
    tmp6 = tl.broadcast_to(tl.where(rmask, tmp5, 0), [XBLOCK, RBLOCK])
    tmp7 = tl.reduce(tmp6, 1, kiln_add)[:, None]
    tmp8 = tmp7.to(tl.float32)
    tmp9 = kiln_div(tmp4, tmp8)
    tl.store(p_buf3 + r1 + 100*x0, tmp9, xmask & rmask)
