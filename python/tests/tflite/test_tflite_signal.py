"""TFLite Micro's signal operators (CUSTOM operators of its audio front ends) against their C
kernels written in Python (signal_reference.py), bit for bit: each operator alone on models
written here, over edge values (silence, full scale, wrapping sums, every FFT radix), and the
audio preprocessors of ../shared/models (int16 audio -> 40 int8 or float features), which chain
all nine. (The TFLite runtime of the other tests, litert.py, has no signal operators.)"""
import numpy as np
import pytest

import anvil
from anvil import frontend

import signal_reference as ref
import tflite_file
import tflite_writer as W
from test_tflite_models import compile_model, model_path, run

RNG = np.random.default_rng(2024)


def run_model(model, *inputs):
    mod, params = frontend.from_tflite(model)
    with anvil.PassContext(opt_level=3):
        lib = anvil.build(mod, target="llvm", params=params)
    out = anvil.runtime.VirtualMachine(lib)["main"](*inputs)
    if isinstance(out, (tuple, list)):
        return [o.numpy() for o in out]
    return [out.numpy()]


def one_op(name, inputs, outputs, options, constants=()):
    """A model of one custom operator. inputs: (shape, dtype) of the model inputs; constants:
    (array) operands after them; outputs: (shape, dtype)."""
    w = W.ModelWriter()
    ins = [w.tensor(f"x{i}", list(shape), dtype) for i, (shape, dtype) in enumerate(inputs)]
    consts = [w.tensor(f"c{i}", list(c.shape), str(c.dtype), data=c)
              for i, c in enumerate(constants)]
    outs = [w.tensor(f"y{i}", list(shape), dtype) for i, (shape, dtype) in enumerate(outputs)]
    w.custom_op(name, ins + consts, outs, options)
    return w.build(ins, outs)


def audio(n, amplitude, seed):
    """A speech-like frame: two tones and noise, int16."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    x = amplitude * (0.6 * np.sin(2 * np.pi * 0.013 * t) + 0.3 * np.sin(2 * np.pi * 0.171 * t))
    x = x + amplitude * 0.1 * rng.standard_normal(n)
    return np.clip(np.round(x), -32768, 32767).astype(np.int16)


@pytest.mark.parametrize("shape,shift", [([1, 480], 12), ([3, 64], 0), ([2, 2, 16], 7)])
def test_window(shape, shift):
    n = shape[-1] if len(shape) < 3 else 32  # a window of two rows over the 3-D input
    window = RNG.integers(-32768, 32768, n).astype(np.int16)
    x = RNG.integers(-32768, 32768, shape).astype(np.int16)
    x.flat[:4] = [-32768, 32767, 0, -1]
    model = one_op("SignalWindow", [(shape, "int16")], [(shape, "int16")], {"shift": shift},
                   [window])
    got = run_model(model, x)[0]
    want = ref.window(x.ravel().tolist(), window.tolist(), shift)
    np.testing.assert_array_equal(got.ravel(), want)


def with_values(x, at, values):
    x = x.copy()
    x[at:at + len(values)] = values
    return x


# A -32768 wraps MaxAbs16's running maximum to -32768 (its negation is stored in int16): what
# follows decides the result, which may stay negative (no scaling).
@pytest.mark.parametrize("kind", ["speech", "quiet", "silence", "full_scale", "min_in_speech",
                                  "min_then_fall", "ends_rising_below_zero", "ends_with_min"])
def test_fft_auto_scale(kind):
    quiet = audio(480, 3, 2)
    x = {"speech": audio(480, 3000, 1), "quiet": quiet,
         "silence": np.zeros(480, np.int16),
         "full_scale": np.array([32767, -32767, 5] * 160, np.int16),
         "min_in_speech": with_values(audio(480, 3000, 3), 100, [-32768]),
         "min_then_fall": with_values(quiet, 200, [-32768, -9, -5, -7, 1]),
         "ends_rising_below_zero": with_values(quiet, 476, [-32768, -50, -40, -30]),
         "ends_with_min": with_values(quiet, 479, [-32768])}[kind]
    model = one_op("SignalFftAutoScale", [([480], "int16")], [([480], "int16"), ([], "int32")], {})
    got, bits = run_model(model, x)
    want, want_bits = ref.fft_auto_scale(x.tolist())
    np.testing.assert_array_equal(got, want)
    assert int(bits) == want_bits


TYPES = {"int16": 7, "int32": 2, "float32": 0}


@pytest.mark.parametrize("fft_length,length", [
    (512, 480),  # micro_speech: radix 4 (half 256 = 4^4)
    (256, 256),  # 128 = 4 * 4 * 4 * 2: a radix-2 level
    (480, 400),  # 240 = 4 * 4 * 3 * 5: radix 3 and 5
    (36, 30),    # 18 = 2 * 3 * 3
    (10, 10),    # 5: one radix-5 level
    (6, 5),      # 3: one radix-3 level
    (4, 3),      # 2: the shortest
])
@pytest.mark.parametrize("dtype", ["int16", "int32"])
def test_rfft_fixed_point(fft_length, length, dtype):
    info = np.iinfo(dtype)
    frames = RNG.integers(info.min, info.max + 1, (2, length), dtype=np.int64).astype(dtype)
    frames[1, :] = info.min  # full scale: every sum wraps where kissfft's does
    bins = 2 * (fft_length // 2 + 1)
    model = one_op("SignalRfft", [([2, length], dtype)], [([2, bins], dtype)],
                   {"T": TYPES[dtype], "fft_length": fft_length})
    got = run_model(model, frames)[0]
    want = ref.rfft(frames.ravel().tolist(), fft_length, bits=np.iinfo(dtype).bits,
                    input_length=length)
    np.testing.assert_array_equal(got.ravel(), want)


@pytest.mark.parametrize("fft_length,shape", [(512, [480]), (60, [2, 3, 50])])
def test_rfft_float(fft_length, shape):
    """kissfft in float does not scale: the DFT of the zero-padded frames."""
    x = RNG.standard_normal(shape).astype(np.float32)
    out_shape = shape[:-1] + [2 * (fft_length // 2 + 1)]
    model = one_op("SignalRfft", [(shape, "float32")], [(out_shape, "float32")],
                   {"T": 0, "fft_length": fft_length})
    got = run_model(model, x)[0]
    spectrum = np.fft.rfft(x.astype(np.float64), n=fft_length, axis=-1)
    want = np.stack([spectrum.real, spectrum.imag], axis=-1).reshape(out_shape)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.sqrt(fft_length))


def test_energy():
    spectrum = RNG.integers(-32768, 32768, 514).astype(np.int16)
    spectrum[10:14] = -32768  # re^2 + im^2 = 2^31 wraps in int32, as the kernel's sum
    model = one_op("SignalEnergy", [([514], "int16")], [([257], "uint32")],
                   {"start_index": 5, "end_index": 241})
    got = run_model(model, spectrum)[0]
    want = ref.energy(spectrum.tolist(), 5, 241, out=[0] * 257)
    np.testing.assert_array_equal(got, np.array(want, np.uint32))


def micro_speech_filter_bank():
    """Mel channels over 257 bins like micro_speech's: 40 channels with triangular weights."""
    channels, starts, widths = 40, [], []
    bin_ = 5
    for c in range(channels + 1):
        width = 2 + c // 5
        starts.append(bin_)
        widths.append(width)
        bin_ += width
    weight_starts = np.concatenate([[0], np.cumsum(widths)[:-1]]).astype(np.int16)
    weights = RNG.integers(0, 4096, int(sum(widths))).astype(np.int16)
    unweights = (4096 - weights).astype(np.int16)
    return (channels, weights, unweights, np.array(starts, np.int16), weight_starts,
            np.array(widths, np.int16))


def test_filter_bank():
    channels, weights, unweights, starts, weight_starts, widths = micro_speech_filter_bank()
    x = RNG.integers(0, 2**32, 257, dtype=np.uint64).astype(np.uint32)
    x[:3] = 0xFFFFFFFF
    weights[:2] = [-1, -32768]  # negative weights wrap in uint64 as C converts them
    model = one_op("SignalFilterBank", [([257], "uint32")], [([channels], "uint64")],
                   {"num_channels": channels},
                   [weights, unweights, starts, weight_starts, widths])
    got = run_model(model, x)[0]
    want = ref.filter_bank([int(v) for v in x], weights.tolist(), unweights.tolist(),
                           starts.tolist(), weight_starts.tolist(), widths.tolist(), channels)
    np.testing.assert_array_equal(got, np.array(want, np.uint64))


@pytest.mark.parametrize("scale_bits", [0, 5, 15])
def test_filter_bank_square_root(scale_bits):
    x = np.concatenate([
        RNG.integers(0, 2**32, 20, dtype=np.uint64),           # the 32-bit path
        RNG.integers(0, 2**63, 20, dtype=np.uint64) * np.uint64(2) + np.uint64(1),
        np.array([0, 1, 2, 3, 0xFFFE0001, 0xFFFFFFFF, 2**32, 2**32 + 1, 2**64 - 1, 2**64 - 2,
                  (2**32 - 1)**2, (2**32 - 1)**2 - 1, 65535**2 + 65535, 65535**2 + 65536],
                 np.uint64)])
    model = one_op("SignalFilterBankSquareRoot", [([x.size], "uint64"), ([], "int32")],
                   [([x.size], "uint32")], {})
    got = run_model(model, x, np.array(scale_bits, np.int32))[0]
    want = ref.filter_bank_square_root([int(v) for v in x], scale_bits)
    np.testing.assert_array_equal(got, np.array(want, np.uint32))


SPECTRAL_SUBTRACTION = dict(alternate_one_minus_smoothing=15401, alternate_smoothing=983,
                            min_signal_remaining=819, num_channels=40,
                            one_minus_smoothing=15975, smoothing=409, smoothing_bits=10,
                            spectral_subtraction_bits=14)


@pytest.mark.parametrize("clamping", [False, True])
def test_spectral_subtraction_from_the_reset_state(clamping):
    options = dict(SPECTRAL_SUBTRACTION, clamping=clamping)
    x = RNG.integers(0, 2**22, 40, dtype=np.uint64).astype(np.uint32)
    x[:4] = [0, 1, 0xFFFFFFFF, 2**22]  # the shifted signal wraps in uint32
    model = one_op("SignalFilterBankSpectralSubtraction", [([40], "uint32")],
                   [([40], "uint32"), ([40], "uint32")], options)
    got, noise = run_model(model, x)
    want, want_noise = ref.SpectralSubtraction(**options)([int(v) for v in x])
    np.testing.assert_array_equal(got, np.array(want, np.uint32))
    np.testing.assert_array_equal(noise, np.array(want_noise, np.uint32))


def gain_table():
    return RNG.integers(-2000, 8000, 125).astype(np.int16)


def test_pcan():
    lut = gain_table()
    x = RNG.integers(0, 2**20, 64, dtype=np.uint64).astype(np.uint32)
    noise = np.concatenate([np.array([0, 1, 2, 3, 4, 1023, 1024, 2047, 2048, 0xFFFFFFFF],
                                     np.uint32),
                            (np.uint32(1) << RNG.integers(0, 32, 54).astype(np.uint32)) +
                            RNG.integers(0, 1000, 54).astype(np.uint32)])
    model = one_op("SignalPCAN", [([64], "uint32"), ([64], "uint32")], [([64], "uint32")],
                   {"snr_shift": 6}, [lut])
    got = run_model(model, x, noise)[0]
    want = ref.pcan([int(v) for v in x], [int(v) for v in noise], lut.tolist(), 6)
    np.testing.assert_array_equal(got, np.array(want, np.uint32))


@pytest.mark.parametrize("correction_bits,scale", [(3, 64), (0, 1 << 16), (10, 7)])
def test_filter_bank_log(correction_bits, scale):
    x = np.concatenate([np.array([0, 1, 2, 3, 2**16, 2**31, 0xFFFFFFFF], np.uint32),
                        RNG.integers(0, 2**32, 57, dtype=np.uint64).astype(np.uint32),
                        RNG.integers(0, 5000, 64).astype(np.uint32)])
    model = one_op("SignalFilterBankLog", [([x.size], "uint32")], [([x.size], "int16")],
                   {"input_correction_bits": correction_bits, "output_scale": scale})
    got = run_model(model, x)[0]
    want = ref.filter_bank_log([int(v) for v in x], scale, correction_bits)
    np.testing.assert_array_equal(got, np.array(want, np.int16))


# ---- the audio preprocessors of ../shared/models ----

def preprocessor_reference(frame, constants):
    """micro_speech's audio front end (the preprocessor models' graph), in the reference."""
    window, weights, unweights, starts, weight_starts, widths, lut = constants
    x = ref.window(frame.tolist(), window, 12)
    x, scale_bits = ref.fft_auto_scale(x)
    spectrum = ref.rfft(x, 512)
    energy = ref.energy(spectrum, 5, 241, out=[0] * 257)
    channels = ref.filter_bank(energy, weights, unweights, starts, weight_starts, widths, 40)
    channels = ref.filter_bank_square_root(channels, scale_bits)
    cleaned, noise = ref.SpectralSubtraction(clamping=False, **SPECTRAL_SUBTRACTION)(channels)
    normalized = ref.pcan(cleaned, noise, lut, 6)
    return np.array(ref.filter_bank_log(normalized, 64, 3), np.int64)


def preprocessor_constants(data):
    """The models' window, filter bank and PCAN table, by tensor name."""
    tensors = {t["name"]: t for t in tflite_file.tensors(data)}

    def values(name):
        return np.frombuffer(tensors[name]["data"], np.int16).tolist()
    return [values(n) for n in ["Const", "signal_filter_bank/Const", "signal_filter_bank/Const_1",
                                "signal_filter_bank/Const_2", "signal_filter_bank/Const_3",
                                "signal_filter_bank/Const_4", "signal_pcan/Const"]]


@pytest.mark.parametrize("kind", ["int8", "float"])
def test_audio_preprocessor(kind):
    path = model_path(f"audio_preprocessor_{kind}.tflite")
    vm = compile_model(path)
    constants = preprocessor_constants(path.read_bytes())
    frames = [audio(480, 12000, 3), audio(480, 300, 4), audio(480, 3, 5),
              np.zeros(480, np.int16), np.full(480, 32767, np.int16)]
    for frame in frames:
        got = run(vm, frame.reshape(1, 480))[0]
        features = preprocessor_reference(frame, constants)
        if kind == "int8":
            # clip(trunc((x * 256 + 333) / 666) - 128, -128, 127), the model's tail
            want = np.clip((features * 256 + 333) // 666 - 128, -128, 127).astype(np.int8)
            np.testing.assert_array_equal(got, want)
        else:
            want = features.astype(np.float32) / np.float32(25.6)
            np.testing.assert_allclose(got, want, rtol=1e-6)
