"""TFLite Micro's integer UNIDIRECTIONAL_SEQUENCE_LSTM (tflite-micro lstm_eval.h, LstmStep) in
NumPy, bit for bit: int8 activations (int32 accumulators and biases) or int16 ones (int64), an
int16 cell state, gates through TFLite Micro's interpolated sigmoid table. The golden integers
at the end were produced by compiling tflite-micro's own kernel code on its LSTM test model
(testdata/lstm_test_data.cc); check_micro_goldens() holds this model to them, and the tests hold
Anvil's converter to this model."""
import math

import numpy as np

f32 = np.float32

def _a(x):
    return np.asarray(x, dtype=np.int64)


def wrap(x, bits):
    """Two's-complement wrap-around to `bits` (a C++ static_cast narrowing)."""
    x = _a(x)
    half = 1 << (bits - 1)
    return ((x + half) & ((1 << bits) - 1)) - half


def sat(x, bits):
    x = _a(x)
    return np.clip(x, -(1 << (bits - 1)), (1 << (bits - 1)) - 1)


def tdiv(a, d):
    """C/C++ integer division (truncates toward zero); d > 0."""
    a = _a(a)
    return np.where(a >= 0, a // d, -((-a) // d))


def round_half_away(v):
    """std::round / TfLiteRound on an exactly representable value."""
    v = float(v)
    return math.copysign(math.floor(abs(v) + 0.5), v)


def srdhm32(a, b):
    """gemmlowp SaturatingRoundingDoublingHighMul, int32."""
    a, b = _a(a), _a(b)
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    r = tdiv(ab + nudge, 1 << 31)
    ovf = (a == b) & (a == -(1 << 31))
    return np.where(ovf, (1 << 31) - 1, wrap(r, 32))


def rdbpot(x, e):
    """gemmlowp RoundingDivideByPOT: round-half-away-from-zero x / 2^e."""
    x, e = _a(x), _a(e)
    mask = (np.int64(1) << e) - 1
    rem = x & mask
    thr = (mask >> 1) + (x < 0)
    return (x >> e) + (rem > thr)


def mbqm(x, m, s):
    """MultiplyByQuantizedMultiplier(int32 x, int32 m, int shift)."""
    x, m, s = _a(x), _a(m), _a(s)
    ls = np.maximum(s, 0)
    rs = np.maximum(-s, 0)
    return rdbpot(srdhm32(wrap(x * (np.int64(1) << ls), 32), m), rs)


def mbqm_i64(x, m, s):
    """MultiplyByQuantizedMultiplier(int64 x, ...): 16-bit reduced multiplier
    (identical for single and double rounding builds)."""
    x, m, s = _a(x), _a(m), _a(s)
    red = np.where(m < 0x7FFF0000, (m + (1 << 15)) >> 16, 0x7FFF)
    ts = 15 - s
    return wrap((x * red + (np.int64(1) << (ts - 1))) >> ts, 32)


def quantize_multiplier(d):
    """tflite::QuantizeMultiplier(double) -> (int32 significand, shift)."""
    d = float(d)
    if d == 0.0:
        return 0, 0
    q, shift = math.frexp(d)
    qf = int(round_half_away(q * (1 << 31)))
    assert qf <= (1 << 31)
    if qf == (1 << 31):
        qf //= 2
        shift += 1
    if shift < -31:
        shift, qf = 0, 0
    return qf, shift


def checked_log2(x):
    """tflite::CheckedLog2(float) -> (ok, rounded log2)."""
    x = f32(x)
    l2 = f32(np.log(x)) * f32(f32(1.0) / f32(np.log(f32(2.0))))
    r = f32(round_half_away(l2))
    return bool(abs(f32(l2 - r)) < f32(1e-3)), int(r)


# sigmoid(i/24) in 0.16 format; data table from tflite kernels/internal/common.h
SIGMOID_TABLE_U16 = np.array([
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498,
    40149, 40794, 41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255,
    46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409, 51865,
    52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174,
    56503, 56823, 57133, 57433, 57724, 58007, 58280, 58544, 58800, 59048, 59288,
    59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110, 61279, 61441,
    61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886,
    62990, 63090, 63186, 63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835,
    63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308, 64357, 64405, 64450,
    64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845,
    64873, 64900, 64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079, 65097,
    65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234, 65246, 65258,
    65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360,
    65367, 65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425,
    65429, 65433, 65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465,
    65468, 65471, 65474, 65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491,
    65493, 65495, 65497, 65498, 65500, 65501, 65503, 65504, 65505, 65507, 65508,
    65509, 65510, 65511, 65512, 65513, 65514, 65515, 65516, 65517, 65517, 65518,
    65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524, 65525,
    65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529,
    65529, 65529, 65530, 65530, 65530, 65530, 65531, 65531, 65531, 65531, 65531,
    65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533, 65533, 65533,
    65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534,
    65534, 65534, 65535], dtype=np.int64)


def _w16(x):
    return wrap(x, 16)


def _lut_prescale(x, multiplier, left_shift):
    if multiplier == 0:  # power-of-two case
        multiplier, left_shift = 3 << left_shift, 0
    rnd = (1 << (left_shift - 1)) if left_shift > 0 else 0
    return (_a(x) * multiplier + rnd) >> left_shift


def _interpolated_sigmoid(av, fraction_bits, saturated):
    """The sigmoid table interpolated at av / 2^fraction_bits (units of 1/24), in
    Q0.(16 + fraction_bits); `saturated` past the table."""
    uh = av >> fraction_bits
    uhc = np.minimum(uh, 254)
    ua = SIGMOID_TABLE_U16[uhc]
    ub = SIGMOID_TABLE_U16[uhc + 1]
    frac = av & ((1 << fraction_bits) - 1)
    return np.where(uh >= 255, saturated, (ua << fraction_bits) + frac * (ub - ua))


def micro_logistic16(x, multiplier=0, left_shift=0):
    """reference_integer_ops::Logistic(int16) as called by the TFLM LSTM
    (multiplier 0, shift 0 => Q3.12 input); Q0.15 output."""
    v = _lut_prescale(x, multiplier, left_shift)
    r = _interpolated_sigmoid(np.abs(v), 9, 0x7FFF << 10)
    r = np.where(v >= 0, r + (1 << 9), (1 << 25) - r + (1 << 9) - 1)
    return _w16(r >> 10)


def micro_tanh16(cell_state_scale_power, x):
    """lstm_internal::Tanh(power, ...) of TFLM: input scale 2^power,
    output Q0.15, LUT based."""
    shift = (15 + cell_state_scale_power) - 3
    mult = 0
    if shift < 0:
        shift, mult = -shift, 3
    v = _lut_prescale(x, mult, shift)
    r = _interpolated_sigmoid(np.abs(v), 8, 0xFFFF << 8)
    r = np.where(v >= 0, r - (1 << 23) + (1 << 7), -r + (1 << 23) + (1 << 7) - 1)
    return _w16(r >> 8)


class QT:
    """A quantized tensor: integer data + per-tensor scale / zero point."""

    def __init__(self, q, scale=1.0, zp=0):
        self.q = _a(q)
        self.scale = f32(scale)
        self.zp = int(zp)


GATES = ("i", "f", "c", "o")


def micro_prepare(t, cell_clip=0.0):
    for k in ("w_xi", "w_hi", "b_i"):
        if t.get(k) is None:
            raise ValueError("TFLM integer LSTM does not support CIFG")
    for k in ("w_ci", "w_cf", "w_co", "w_proj", "b_proj", "ln_i", "ln_f",
              "ln_c", "ln_o"):
        if t.get(k) is not None:
            raise ValueError("TFLM LSTM: peephole/projection/layer norm "
                             "tensors must be absent")
    p = {}
    q312 = float(f32(0.000244140625))  # 2^-12
    xs, hs, cs = t["x"].scale, t["h"].scale, t["c"].scale
    for g in GATES:
        # GetQuantizedConvolutionMultipler without bias: float product
        p["in_" + g] = quantize_multiplier(float(f32(xs * t["w_x" + g].scale)) / q312)
        p["rec_" + g] = quantize_multiplier(float(f32(hs * t["w_h" + g].scale)) / q312)
    _, power = checked_log2(cs)  # result flag ignored by TFLM
    p["cell_power"] = power
    p["cell_clip"] = float(f32(cell_clip))
    p["qcell_clip"] = int(np.trunc(min(max(float(f32(cell_clip)) / float(cs),
                                           -32768.0), 32767.0)))
    q015 = float(f32(0.000030517578125))  # 2^-15
    p["mul_fc"] = quantize_multiplier(q015 * float(cs) / float(cs))
    p["mul_ic"] = quantize_multiplier(q015 * q015 / float(cs))
    p["mul_oh"] = quantize_multiplier(q015 * q015 / float(hs))
    return p


def micro_step(t, p, x, h, c, act_bits, cell_gate_act="tanh"):
    """lstm_internal::LstmStep for one [B, ...] slice.  act_bits 8 -> int32
    accumulator / bias; 16 -> int64 accumulator / bias."""
    x, h, c = _a(x), _a(h), _a(c)
    mb = mbqm if act_bits == 8 else mbqm_i64
    xz, hz = t["x"].zp, t["h"].zp

    def gate(g, act):
        acc = (x - xz) @ t["w_x" + g].q.T + t["b_" + g].q[None, :]
        if act_bits == 8:
            acc = wrap(acc, 32)
        fin = sat(mb(acc, *p["in_" + g]), 16)
        acc = (h - hz) @ t["w_h" + g].q.T
        if act_bits == 8:
            acc = wrap(acc, 32)
        frec = sat(mb(acc, *p["rec_" + g]), 16)
        pre = sat(fin + frec, 16)
        if act == "sigmoid":
            return micro_logistic16(pre)
        return micro_tanh16(-12, pre)

    fg = gate("f", "sigmoid")
    ig = gate("i", "sigmoid")
    cg = gate("c", cell_gate_act)
    c = sat(mbqm(fg * c, *p["mul_fc"]), 16)
    c = sat(c + sat(mbqm(ig * cg, *p["mul_ic"]), 16), 16)
    if p["cell_clip"] > 0:
        c = np.clip(c, -p["qcell_clip"], p["qcell_clip"])
    og = gate("o", "sigmoid")
    tc = micro_tanh16(p["cell_power"], c)
    lo, hi = -(1 << (act_bits - 1)), (1 << (act_bits - 1)) - 1
    h = np.clip(mbqm(tc * og, *p["mul_oh"]) + hz, lo, hi)
    return h, c


def micro_run(t, p, xs, h0, c0, act_bits, time_major=False):
    xs = _a(xs)
    h, c = _a(h0).copy(), _a(c0).copy()
    if time_major:
        outs = []
        for step in range(xs.shape[0]):
            h, c = micro_step(t, p, xs[step], h, c, act_bits)
            outs.append(h)
        return np.stack(outs), h, c
    outs = np.zeros(xs.shape[:2] + (h.shape[1],), np.int64)
    for b in range(xs.shape[0]):
        hb, cb = h[b:b + 1], c[b:b + 1]
        for step in range(xs.shape[1]):
            hb, cb = micro_step(t, p, xs[b, step:step + 1], hb, cb, act_bits)
            outs[b, step] = hb[0]
        h[b], c[b] = hb[0], cb[0]
    return outs, h, c


# --------------------------------------------------------------------------
# Golden test data
# --------------------------------------------------------------------------

def _q_micro(vals, scale, zp, bits):
    """FloatToQuantizedType (micro_utils.h): round(float/float) + zp, clamp."""
    out = []
    for v in vals:
        r = int(round_half_away(f32(f32(v) / f32(scale)))) + zp
        out.append(min(max(r, -(1 << (bits - 1))), (1 << (bits - 1)) - 1))
    return np.array(out, np.int64)


def _q_micro_sym(vals, scale, bits):
    """FloatToSymmetricQuantizedType: clamp to [min+1, max]."""
    out = []
    for v in vals:
        r = int(round_half_away(f32(f32(v) / f32(scale))))
        out.append(min(max(r, -(1 << (bits - 1)) + 1), (1 << (bits - 1)) - 1))
    return np.array(out, np.int64)


# tflite-micro testdata/lstm_test_data.cc: 2x3x2x2 model (batch 2, 3 steps,
# input dim 2, state dim 2), float source of truth, gate order f, i, c, o.
_MICRO_FLOAT = dict(
    w={"f": [-10, -10, -20, -20], "i": [10, 10, 20, 20], "c": [1, 1, 1, 1],
       "o": [1, 1, 1, 1]},
    b={"f": [1, 2], "i": [-1, -2], "c": [0, 0], "o": [0, 0]},
    eval_input=[0.2, 0.3, 0.2, 0.3, 0.2, 0.3, -0.98, 0.62, 0.01, 0.99, 0.49, -0.32],
    eval_expected_output=[0.26455893, 0.26870455, 0.47935803, 0.47937014,
                          0.58013272, 0.58013278, -1.41184672e-3, -1.43329117e-5,
                          0.46887168, 0.46891281, 0.50054074, 0.50054148],
    eval_expected_hidden=[0.58013272, 0.58013278, 0.50054074, 0.50054148],
    eval_expected_cell=[0.89740515, 0.8974053, 0.80327607, 0.80327785],
    step_input=[0.2, 0.3, -0.98, 0.62],
    step_hidden=[-0.1, 0.2, -0.3, 0.5],
    step_cell=[-1.3, 6.2, -7.3, 3.5],
    step_expected_cell=[0.52475447, 0.53730665, -6, 3.47992756],
    step_expected_hidden=[0.31079388, 0.3169827, -0.46007947, 0.45921249],
    cell_clip=6.0,
)

# Quantization settings (Get2X2Int8/Int16LstmQuantizationSettings)
_MICRO_Q = {
    8: dict(input=(0.00784313725490196, 0), hidden=(0.004705882165580988, -21),
            cell=(0.00024414062, 0),
            w={"f": 0.15748031496062992, "i": 0.15748031496062992,
               "c": 0.007874015748031496, "o": 0.007874015748031496},
            b={"f": 0.0012351397251814111, "i": 0.0012351397251814111,
               "c": 6.175698625907056e-5, "o": 6.175698625907056e-5}),
    16: dict(input=(3.0518044e-5, 0), hidden=(2.1362956633198035e-05, 0),
             cell=(0.00024414062, 0),
             w={"f": 0.15748031496062992, "i": 0.15748031496062992,
                "c": 0.007874015748031496, "o": 0.007874015748031496},
             b={"f": 4.8059911474468205e-06, "i": 4.8059911474468205e-06,
                "c": 2.40299557372341e-07, "o": 2.40299557372341e-07}),
}

# Integer goldens produced by compiling the actual tflite-micro kernel code
# (lstm_eval.h EvalLstm + PrepareGateParametersInteger, x86-64, default build)
# on the test model above; see the spec for how they were generated.
_MICRO_GOLDEN = {
    ("eval", 8): dict(
        x=[25, 38, 25, 38, 25, 38, -125, 79, 1, 126, 62, -41],
        h0=[-21, -21, -21, -21], c0=[0, 0, 0, 0],
        out=[35, 35, 80, 80, 102, 102, -21, -21, 78, 78, 85, 85],
        h=[102, 102, 85, 85], c=[3664, 3664, 3274, 3274]),
    ("eval", 16): dict(
        x=[6554, 9830, 6554, 9830, 6554, 9830, -32112, 20316, 328, 32440, 16056,
           -10486],
        h0=[0, 0, 0, 0], c0=[0, 0, 0, 0],
        out=[12391, 12577, 22439, 22439, 27159, 27159, -66, 0, 21943, 21943,
             23426, 23426],
        h=[27159, 27159, 23426, 23426], c=[3676, 3676, 3290, 3290]),
    ("step", 8): dict(
        x=[25, 38, -125, 79], h0=[-42, 22, -85, 85],
        c0=[-5325, 25395, -29901, 14336],
        out=[45, 46, -119, 76], h=[45, 46, -119, 76],
        c=[2144, 2201, -24576, 14079]),
    ("step", 16): dict(
        x=[6554, 9830, -32112, 20316], h0=[-4681, 9362, -14043, 23405],
        c0=[-5325, 25395, -29901, 14336],
        out=[14564, 14879, -21537, 21493], h=[14564, 14879, -21537, 21493],
        c=[2152, 2208, -24576, 14066]),
}


def _micro_model(bits):
    qs = _MICRO_Q[bits]
    t = {}
    for g in GATES:
        w = _q_micro_sym(_MICRO_FLOAT["w"][g], qs["w"][g], 8).reshape(2, 2)
        t["w_x" + g] = QT(w, qs["w"][g])
        t["w_h" + g] = QT(w.copy(), qs["w"][g])
        t["b_" + g] = QT(_q_micro_sym(_MICRO_FLOAT["b"][g], qs["b"][g],
                                      32 if bits == 8 else 64), qs["b"][g])
    t["x"] = QT(np.zeros(0), *qs["input"])
    t["h"] = QT(np.zeros(0), *qs["hidden"])
    t["c"] = QT(np.zeros(0), *qs["cell"])
    return t


def _check_micro():
    fl = _MICRO_FLOAT
    results = []
    for (kind, bits), gold in sorted(_MICRO_GOLDEN.items()):
        qs = _MICRO_Q[bits]
        t = _micro_model(bits)
        steps = 3 if kind == "eval" else 1
        fin = fl[kind + "_input"]
        fh = [0.0] * 4 if kind == "eval" else fl["step_hidden"]
        fc = [0.0] * 4 if kind == "eval" else fl["step_cell"]
        x = _q_micro(fin, qs["input"][0], qs["input"][1], bits)
        h0 = _q_micro(fh, qs["hidden"][0], qs["hidden"][1], bits)
        c0 = _q_micro(fc, qs["cell"][0], 0, 16)
        # the quantized inputs must equal what the C++ test fixture produced
        assert list(x) == gold["x"] and list(h0) == gold["h0"] and \
            list(c0) == gold["c0"], (kind, bits)
        p = micro_prepare(t, fl["cell_clip"])
        out, h, c = micro_run(t, p, x.reshape(2, steps, 2), h0.reshape(2, 2),
                              c0.reshape(2, 2), bits, time_major=False)
        ok = (list(out.reshape(-1)) == gold["out"] and
              list(h.reshape(-1)) == gold["h"] and
              list(c.reshape(-1)) == gold["c"])
        # tolerance checks of the original TFLM unit tests (float goldens)
        hs, hz = f32(qs["hidden"][0]), qs["hidden"][1]
        cs = f32(qs["cell"][0])
        deq_h = hs * (h.reshape(-1) - hz).astype(np.float32)
        deq_c = cs * c.reshape(-1).astype(np.float32)
        if kind == "eval":
            htol, ctol = (1e-2, 1e-2) if bits == 8 else (1e-3, 1e-2)
            eh, ec = fl["eval_expected_hidden"], fl["eval_expected_cell"]
            deq_o = hs * (out.reshape(-1)[:4] - hz).astype(np.float32)
            tol_ok = np.all(np.abs(deq_o - fl["eval_expected_output"][:4]) <= htol)
        else:
            htol, ctol = (1e-2, 1e-1) if bits == 8 else (1e-3, 1e-1)
            eh, ec = fl["step_expected_hidden"], fl["step_expected_cell"]
            tol_ok = True
        tol_ok = bool(tol_ok and np.all(np.abs(deq_h - eh) <= htol)
                      and np.all(np.abs(deq_c - ec) <= ctol))
        results.append(("micro %s int%d" % (kind, bits), ok, tol_ok))
    return results
