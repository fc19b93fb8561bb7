"""TFLite Micro's signal operators (the audio front end of micro_speech) in plain Python integers,
for the TFLite importer's tests: each function follows its C kernel (tflite-micro 90b983c
signal/src/, and kissfft v130 with TFLite Micro's patch for SignalRfft) operation for operation,
wrapping where C converts to a narrower type, so the converters must match them bit for bit.
Checked once against those C sources compiled on this machine (random inputs, every operator, FFT
lengths 4 to 2048)."""
import math

def s16(x):  # C conversion to int16_t (two's complement wrap)
    x &= 0xFFFF
    return x - 0x10000 if x & 0x8000 else x
def s32(x):
    x &= 0xFFFFFFFF
    return x - 0x100000000 if x & 0x80000000 else x
def s64(x):
    x &= 0xFFFFFFFFFFFFFFFF
    return x - (1 << 64) if x & (1 << 63) else x
def u32(x): return x & 0xFFFFFFFF
def u64(x): return x & 0xFFFFFFFFFFFFFFFF

def msb32(x):           # MostSignificantBit32 (gcc build): number of bits; x==0 -> 32 (!)
    x = u32(x)
    return x.bit_length() if x else 32
def msb64(x):
    x = u64(x)
    return x.bit_length() if x else 64

# ---------------- SignalWindow ----------------
def window(inp, weights, shift):
    n = len(weights); out = []
    for i in range(0, len(inp), n):          # loops over flat input in chunks of weight_size
        for k in range(n):
            raw = s32(inp[i + k] * weights[k]) >> shift   # int32 product, arithmetic shift
            out.append(max(-32768, min(32767, raw)))
    return out

# ---------------- SignalFftAutoScale ----------------
def max_abs16(inp):
    m = 0
    for v in inp:
        if v > m: m = v
        elif -v > m: m = s16(-v)             # compare in int; -(-32768)=32768 stored into int16 -> -32768
    return m
def fft_auto_scale(inp):
    mx = max_abs16(inp)
    scale_bits = 16 - msb32(u32(mx)) - 1       # int16 -> uint32 sign-extends; mx==0 -> msb=32 (gcc build) -> 0
    if scale_bits <= 0: scale_bits = 0
    return [s16(v * (1 << scale_bits)) for v in inp], scale_bits

# ---------------- kissfft fixed point ----------------
class Kiss:
    def __init__(self, bits):
        self.bits = bits
        if bits == 16: self.FRACBITS, self.SAMP_MAX, self.wrap = 15, 32767, s16
        else:          self.FRACBITS, self.SAMP_MAX, self.wrap = 31, 2147483647, s32
        self.prodwrap = s32 if bits == 16 else s64   # SAMPPROD
    def sround(self, x):
        return self.wrap(self.prodwrap(x + (1 << (self.FRACBITS - 1))) >> self.FRACBITS)
    def smul(self, a, b): return self.prodwrap(a * b)
    def S_MUL(self, a, b): return self.sround(self.smul(a, b))
    def C_MUL(self, a, b):
        return (self.sround(self.prodwrap(self.smul(a[0], b[0]) - self.smul(a[1], b[1]))),
                self.sround(self.prodwrap(self.smul(a[0], b[1]) + self.smul(a[1], b[0]))))
    def DIVSCALAR(self, x, k): return self.sround(self.smul(x, self.SAMP_MAX // k))
    def C_FIXDIV(self, c, k): return (self.DIVSCALAR(c[0], k), self.DIVSCALAR(c[1], k))
    def C_ADD(self, a, b): return (self.wrap(a[0] + b[0]), self.wrap(a[1] + b[1]))
    def C_SUB(self, a, b): return (self.wrap(a[0] - b[0]), self.wrap(a[1] - b[1]))
    def cexp(self, phase):
        return (self.wrap(int(math.floor(.5 + self.SAMP_MAX * math.cos(phase)))),
                self.wrap(int(math.floor(.5 + self.SAMP_MAX * math.sin(phase)))))

def kf_factor(n):
    p = 4; floor_sqrt = math.floor(math.sqrt(float(n))); fac = []
    while True:
        while n % p:
            if p == 4: p = 2
            elif p == 2: p = 3
            else: p += 2
            if p > floor_sqrt: p = n
        n //= p; fac += [p, n]
        if n <= 1: break
    return fac

class KissFFT:
    def __init__(self, nfft, kiss):
        self.k = kiss; self.nfft = nfft
        pi = 3.141592653589793238462643383279502884197169399375105820974944
        self.tw = [kiss.cexp(-2 * pi * i / nfft) for i in range(nfft)]
        self.factors = kf_factor(nfft)
    def run(self, fin):
        out = [None] * self.nfft
        self._work(out, 0, fin, 0, 1, 0)
        return out
    def _work(self, F, fo, f, fi, fstride, fac):
        p, m = self.factors[fac], self.factors[fac + 1]
        if m == 1:
            for j in range(p): F[fo + j] = f[fi + j * fstride]
        else:
            for j in range(p): self._work(F, fo + j * m, f, fi + j * fstride, fstride * p, fac + 2)
        {2: self._b2, 3: self._b3, 4: self._b4, 5: self._b5}[p](F, fo, fstride, m)
    def _b2(self, F, fo, fstride, m):
        K = self.k
        for u in range(m):
            a = K.C_FIXDIV(F[fo + u], 2); b = K.C_FIXDIV(F[fo + u + m], 2)
            t = K.C_MUL(b, self.tw[u * fstride])
            F[fo + u + m] = K.C_SUB(a, t); F[fo + u] = K.C_ADD(a, t)
    def _b4(self, F, fo, fstride, m):
        K = self.k; w = K.wrap
        for u in range(m):
            i0, i1, i2, i3 = fo + u, fo + u + m, fo + u + 2 * m, fo + u + 3 * m
            f0, f1, f2, f3 = (K.C_FIXDIV(F[i], 4) for i in (i0, i1, i2, i3))
            s0 = K.C_MUL(f1, self.tw[u * fstride]); s1 = K.C_MUL(f2, self.tw[2 * u * fstride]); s2 = K.C_MUL(f3, self.tw[3 * u * fstride])
            s5 = K.C_SUB(f0, s1); f0 = K.C_ADD(f0, s1)
            s3 = K.C_ADD(s0, s2); s4 = K.C_SUB(s0, s2)
            F[i2] = K.C_SUB(f0, s3); F[i0] = K.C_ADD(f0, s3)
            F[i1] = (w(s5[0] + s4[1]), w(s5[1] - s4[0]))       # forward transform
            F[i3] = (w(s5[0] - s4[1]), w(s5[1] + s4[0]))
    def _b3(self, F, fo, fstride, m):
        K = self.k; w = K.wrap; epi3 = self.tw[fstride * m]
        for u in range(m):
            i0, i1, i2 = fo + u, fo + u + m, fo + u + 2 * m
            f0, f1, f2 = (K.C_FIXDIV(F[i], 3) for i in (i0, i1, i2))
            s1 = K.C_MUL(f1, self.tw[u * fstride]); s2 = K.C_MUL(f2, self.tw[2 * u * fstride])
            s3 = K.C_ADD(s1, s2); s0 = K.C_SUB(s1, s2)
            fm = (w(f0[0] - (s3[0] >> 1)), w(f0[1] - (s3[1] >> 1)))
            s0 = (K.S_MUL(s0[0], epi3[1]), K.S_MUL(s0[1], epi3[1]))
            F[i0] = K.C_ADD(f0, s3)
            F[i2] = (w(fm[0] + s0[1]), w(fm[1] - s0[0]))
            F[i1] = (w(fm[0] - s0[1]), w(fm[1] + s0[0]))
    def _b5(self, F, fo, fstride, m):
        K = self.k; w = K.wrap; S = K.S_MUL
        ya = self.tw[fstride * m]; yb = self.tw[fstride * 2 * m]
        for u in range(m):
            idx = [fo + u + q * m for q in range(5)]
            f = [K.C_FIXDIV(F[i], 5) for i in idx]
            s0 = f[0]
            s1 = K.C_MUL(f[1], self.tw[u * fstride]); s2 = K.C_MUL(f[2], self.tw[2 * u * fstride])
            s3 = K.C_MUL(f[3], self.tw[3 * u * fstride]); s4 = K.C_MUL(f[4], self.tw[4 * u * fstride])
            s7 = K.C_ADD(s1, s4); s10 = K.C_SUB(s1, s4); s8 = K.C_ADD(s2, s3); s9 = K.C_SUB(s2, s3)
            F[idx[0]] = (w(f[0][0] + (s7[0] + s8[0])), w(f[0][1] + (s7[1] + s8[1])))
            s5 = (w(s0[0] + S(s7[0], ya[0]) + S(s8[0], yb[0])), w(s0[1] + S(s7[1], ya[0]) + S(s8[1], yb[0])))
            s6 = (w(S(s10[1], ya[1]) + S(s9[1], yb[1])), w(-S(s10[0], ya[1]) - S(s9[0], yb[1])))
            F[idx[1]] = K.C_SUB(s5, s6); F[idx[4]] = K.C_ADD(s5, s6)
            s11 = (w(s0[0] + S(s7[0], yb[0]) + S(s8[0], ya[0])), w(s0[1] + S(s7[1], yb[0]) + S(s8[1], ya[0])))
            s12 = (w(-S(s10[1], yb[1]) + S(s9[1], ya[1])), w(S(s10[0], yb[1]) - S(s9[0], ya[1])))
            F[idx[2]] = K.C_ADD(s11, s12); F[idx[3]] = K.C_SUB(s11, s12)

class KissFFTR:
    def __init__(self, nfft, bits):
        assert nfft % 2 == 0
        self.K = Kiss(bits); self.ncfft = nfft // 2
        self.sub = KissFFT(self.ncfft, self.K)
        self.super_tw = [self.K.cexp(-3.14159265358979323846264338327 * ((i + 1) / self.ncfft + .5))
                         for i in range(self.ncfft // 2)]
    def run(self, timedata):
        K = self.K; w = K.wrap; n = self.ncfft
        cin = [(timedata[2 * j], timedata[2 * j + 1]) for j in range(n)]
        tmp = self.sub.run(cin)
        out = [None] * (n + 1)
        tdc = K.C_FIXDIV(tmp[0], 2)
        out[0] = (w(tdc[0] + tdc[1]), 0)
        out[n] = (w(tdc[0] - tdc[1]), 0)
        for k in range(1, n // 2 + 1):
            fpk = K.C_FIXDIV(tmp[k], 2)
            fpnk = K.C_FIXDIV((tmp[n - k][0], w(-tmp[n - k][1])), 2)
            f1k = K.C_ADD(fpk, fpnk); f2k = K.C_SUB(fpk, fpnk)
            tw = K.C_MUL(f2k, self.super_tw[k - 1])
            # HALF_OF(x) = (x)>>1 applied to the C expression (a+b): for 16-bit the sum is
            # computed in int (no overflow); for 32-bit it is an int32 sum (wraps) before >>1.
            h = (lambda v: w(v >> 1)) if K.bits == 16 else (lambda v: w(s32(v) >> 1))
            out[k] = (h(f1k[0] + tw[0]), h(f1k[1] + tw[1]))
            out[n - k] = (h(f1k[0] - tw[0]), h(tw[1] - f1k[1]))
        return out

def rfft(inp, fft_length, bits=16, input_length=None):
    """inp: flat list; input_length = innermost input dim. Returns flat interleaved re,im."""
    if input_length is None: input_length = len(inp)
    R = KissFFTR(fft_length, bits); out = []
    for i in range(0, len(inp), input_length):
        frame = list(inp[i:i + input_length]) + [0] * (fft_length - input_length)
        for c in R.run(frame): out += [c[0], c[1]]
    return out

# ---------------- SignalEnergy ----------------
def energy(spec_interleaved, start, end, out=None):
    n = len(spec_interleaved) // 2
    if out is None: out = [None] * n          # elements outside [start,end) are NOT written
    for i in range(start, end):
        re, im = spec_interleaved[2 * i], spec_interleaved[2 * i + 1]
        out[i] = u32(s32(re * re + im * im))
    return out

# ---------------- SignalFilterBank ----------------
def filter_bank(inp, weights, unweights, fstarts, wstarts, widths, num_channels):
    out = []; wacc = 0; uacc = 0
    for i in range(num_channels + 1):
        fs, ws = fstarts[i], wstarts[i]
        for j in range(widths[i]):
            x = inp[fs + j]
            wacc = u64(wacc + u64(weights[ws + j]) * x)
            uacc = u64(uacc + u64(unweights[ws + j]) * x)
        out.append(wacc); wacc = uacc; uacc = 0
    return out[1:]

# ---------------- SignalFilterBankSquareRoot ----------------
def sqrt32(num):
    num = u32(num)
    if num == 0: return 0
    res = 0
    mbn = (32 - msb32(num)) | 1
    bit = 1 << (31 - mbn)
    it = (31 - mbn) // 2 + 1
    for _ in range(it):
        if num >= u32(res + bit):
            num = u32(num - (res + bit)); res = (res >> 1) + bit
        else:
            res >>= 1
        bit >>= 2
    if num > res and res != 0xFFFF: res += 1
    return res & 0xFFFF
def sqrt64(num):
    num = u64(num)
    if (num >> 32) == 0: return sqrt32(num)
    res = 0
    mbn = (64 - msb64(num)) | 1
    bit = 1 << (63 - mbn)
    it = (63 - mbn) // 2 + 1
    for _ in range(it):
        if num >= u64(res + bit):
            num = u64(num - (res + bit)); res = (res >> 1) + bit
        else:
            res >>= 1
        bit >>= 2
    if num > res and res != 0xFFFFFFFF: res += 1
    return u32(res)
def filter_bank_square_root(inp, scale_bits):
    return [sqrt64(x) >> scale_bits for x in inp]

# ---------------- SignalFilterBankSpectralSubtraction ----------------
class SpectralSubtraction:
    def __init__(self, num_channels, smoothing, one_minus_smoothing, alternate_smoothing,
                 alternate_one_minus_smoothing, smoothing_bits, min_signal_remaining,
                 spectral_subtraction_bits, clamping):
        self.__dict__.update(locals()); del self.__dict__['self']
        self.noise = [0] * num_channels          # reset state
    def reset(self): self.noise = [0] * self.num_channels
    def __call__(self, inp):
        out = []
        for i in range(self.num_channels):
            sm, oms = ((self.smoothing, self.one_minus_smoothing) if (i & 1) == 0 else
                       (self.alternate_smoothing, self.alternate_one_minus_smoothing))
            sig_up = u32(inp[i] << self.smoothing_bits)
            self.noise[i] = u32(u64(sig_up * sm + self.noise[i] * oms) >> self.spectral_subtraction_bits)
            est = self.noise[i]
            if est > sig_up:
                est = sig_up
                if self.clamping: self.noise[i] = est
            floor = u32(u64(inp[i] * self.min_signal_remaining) >> self.spectral_subtraction_bits)
            sub = u32(sig_up - est) >> self.smoothing_bits
            out.append(sub if sub > floor else floor)
        return out, list(self.noise)

# ---------------- SignalPCAN ----------------
def wide_dynamic_function(x, lut):
    if x <= 2: return lut[x]
    interval = msb32(x)
    base = 4 * interval - 6
    frac = s16(((x << (11 - interval)) if interval < 11 else (x >> (interval - 11))) & 0x3FF)
    result = s32(lut[base + 2] * frac) >> 5
    result = s32(result + s32(u32(lut[base + 1]) << 5))
    result = s32(result * frac)
    result = s32(result + (1 << 14)) >> 15
    result = s32(result + lut[base + 0])
    return s16(result)
def pcan_shrink(x):
    if x < (2 << 12): return u32(x * x) >> (2 + 2 * 12 - 6)
    return u32((x >> (12 - 6)) - (1 << 6))
def pcan(inp, noise, lut, snr_shift):
    out = []
    for i in range(len(inp)):
        gain = u32(wide_dynamic_function(noise[i], lut))   # int16 -> uint32 (sign-extends)
        snr = u32(u64(inp[i] * gain) >> snr_shift)
        out.append(pcan_shrink(snr))
    return out

# ---------------- SignalFilterBankLog ----------------
LOG_LUT = [0, 224, 442, 654, 861, 1063, 1259, 1450, 1636, 1817, 1992, 2163,
    2329, 2490, 2646, 2797, 2944, 3087, 3224, 3358, 3487, 3611, 3732, 3848,
    3960, 4068, 4172, 4272, 4368, 4460, 4549, 4633, 4714, 4791, 4864, 4934,
    5001, 5063, 5123, 5178, 5231, 5280, 5326, 5368, 5408, 5444, 5477, 5507,
    5533, 5557, 5578, 5595, 5610, 5622, 5631, 5637, 5640, 5641, 5638, 5633,
    5626, 5615, 5602, 5586, 5568, 5547, 5524, 5498, 5470, 5439, 5406, 5370,
    5332, 5291, 5249, 5203, 5156, 5106, 5054, 5000, 4944, 4885, 4825, 4762,
    4697, 4630, 4561, 4490, 4416, 4341, 4264, 4184, 4103, 4020, 3935, 3848,
    3759, 3668, 3575, 3481, 3384, 3286, 3186, 3084, 2981, 2875, 2768, 2659,
    2549, 2437, 2323, 2207, 2090, 1971, 1851, 1729, 1605, 1480, 1353, 1224,
    1094, 963, 830, 695, 559, 421, 282, 142, 0, 0]
def log2_fraction_part32(x, log2x):
    frac = s32(x - (1 << log2x))
    if log2x < 16: frac = s32(frac << (16 - log2x))
    else: frac >>= (log2x - 16)
    base_seg = u32(frac) >> (16 - 7)
    seg_unit = (1 << 16) >> 7
    c0 = LOG_LUT[base_seg]; c1 = LOG_LUT[base_seg + 1]
    seg_base = seg_unit * base_seg
    rel_pos = s32((c1 - c0) * (frac - seg_base)) >> 16
    return u32(frac + c0 + rel_pos)
def log32(x, out_scale):
    integer = u32(msb32(x) - 1)
    fraction = log2_fraction_part32(x, integer)
    log2 = u32((integer << 16) + fraction)
    rnd = 65536 // 2
    loge = u32((45426 * log2 + rnd) >> 16)
    return u32(u32(u32(out_scale) * loge) + rnd) >> 16
def filter_bank_log(inp, output_scale, input_correction_bits):
    out = []
    for x in inp:
        scaled = u32(x << input_correction_bits)
        if scaled > 1:
            lv = log32(scaled, output_scale)
            out.append(lv if lv < 32767 else 32767)
        else:
            out.append(0)
    return out
