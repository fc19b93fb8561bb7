"""The PyTorch importer on recurrent layers: nn.LSTM, nn.GRU, nn.RNN (aten::lstm, aten::gru,
aten::rnn_tanh, aten::rnn_relu) traced and scripted, their cells, and an LSTM classifier."""
import pytest
import torch

import anvil
from pt_check import assert_close, check_module, import_module, run_anvil


class Wrap(torch.nn.Module):
    """Calls the layer as a model would: with or without initial states."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, x):
        return self.layer(x)


class WrapLstmState(torch.nn.Module):
    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, x, h0, c0):
        return self.layer(x, (h0, c0))


class WrapState(torch.nn.Module):
    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, x, h0):
        return self.layer(x, h0)


def states(layers, dirs, batch, size):
    return torch.randn(layers * dirs, batch, size)


@pytest.mark.parametrize("layers", [1, 2])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_lstm(layers, bidirectional, batch_first):
    torch.manual_seed(layers * 4 + bidirectional * 2 + batch_first)
    m = torch.nn.LSTM(5, 7, num_layers=layers, bidirectional=bidirectional,
                      batch_first=batch_first)
    x = torch.randn(3, 4, 5) if batch_first else torch.randn(4, 3, 5)
    check_module(Wrap(m), [x])


@pytest.mark.parametrize("bias", [True, False])
def test_lstm_with_initial_states(bias):
    torch.manual_seed(1)
    m = torch.nn.LSTM(4, 6, num_layers=2, bidirectional=True, bias=bias)
    dirs = 2
    check_module(WrapLstmState(m), [torch.randn(5, 2, 4), states(2, dirs, 2, 6),
                                    states(2, dirs, 2, 6)])


def test_lstm_with_projection():
    torch.manual_seed(2)
    m = torch.nn.LSTM(4, 6, num_layers=2, proj_size=3, bidirectional=True, batch_first=True)
    check_module(WrapLstmState(m), [torch.randn(2, 5, 4), states(2, 2, 2, 3),
                                    states(2, 2, 2, 6)])


@pytest.mark.parametrize("layers", [1, 2])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_gru(layers, bidirectional, batch_first):
    torch.manual_seed(10 + layers * 4 + bidirectional * 2 + batch_first)
    m = torch.nn.GRU(5, 6, num_layers=layers, bidirectional=bidirectional,
                     batch_first=batch_first)
    x = torch.randn(2, 4, 5) if batch_first else torch.randn(4, 2, 5)
    check_module(Wrap(m), [x])


@pytest.mark.parametrize("bias", [True, False])
def test_gru_with_initial_state(bias):
    torch.manual_seed(3)
    m = torch.nn.GRU(4, 5, num_layers=2, bias=bias, bidirectional=True)
    check_module(WrapState(m), [torch.randn(6, 3, 4), states(2, 2, 3, 5)])


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_rnn(nonlinearity, bidirectional):
    torch.manual_seed(4)
    m = torch.nn.RNN(3, 5, num_layers=2, nonlinearity=nonlinearity,
                     bidirectional=bidirectional, batch_first=True)
    check_module(Wrap(m), [torch.randn(2, 6, 3)])
    check_module(WrapState(m), [torch.randn(2, 6, 3), states(2, 1 + bidirectional, 2, 5)])


def test_unbatched_input():
    torch.manual_seed(5)
    check_module(Wrap(torch.nn.LSTM(3, 4)), [torch.randn(5, 3)])
    check_module(Wrap(torch.nn.GRU(3, 4, bidirectional=True)), [torch.randn(5, 3)])


class Cells(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTMCell(4, 5)
        self.gru = torch.nn.GRUCell(5, 6)
        self.rnn = torch.nn.RNNCell(6, 3, nonlinearity="relu")
        self.rnn_tanh = torch.nn.RNNCell(3, 2, bias=False)

    def forward(self, x, h, c):
        h1, c1 = self.lstm(x, (h, c))
        g = self.gru(h1)
        return self.rnn_tanh(self.rnn(g)), c1


def test_cells():
    torch.manual_seed(6)
    check_module(Cells(), [torch.randn(3, 4), torch.randn(3, 5), torch.randn(3, 5)])


class CellLoop(torch.nn.Module):
    """A hand-written recurrence: a cell stepped over the sequence in a scripted loop."""

    def __init__(self):
        super().__init__()
        self.cell = torch.nn.GRUCell(4, 6)

    def forward(self, x):
        h = torch.zeros(x.size(1), 6)
        for t in range(x.size(0)):
            h = self.cell(x[t], h)
        return h


def test_cell_stepped_in_a_loop():
    torch.manual_seed(7)
    check_module(CellLoop(), [torch.randn(5, 2, 4)])


class LstmClassifier(torch.nn.Module):
    """Embedding → LSTM → linear classifier on the last step."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(20, 8)
        self.lstm = torch.nn.LSTM(8, 16, num_layers=2, batch_first=True, bidirectional=True)
        self.fc = torch.nn.Linear(32, 3)

    def forward(self, tokens):
        out, (h, c) = self.lstm(self.embed(tokens))
        return self.fc(out[:, -1, :])


def test_lstm_classifier():
    torch.manual_seed(8)
    check_module(LstmClassifier(), [torch.randint(0, 20, (4, 7))])


def test_packed_sequences_are_an_error():
    class Packed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(3, 4)

        def forward(self, x, lengths):
            p = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
            out, _ = self.lstm(p)
            return out.data

    x, lengths = torch.randn(5, 2, 3), torch.tensor([5, 3])
    with pytest.raises(anvil.UserError):
        import_module(torch.jit.trace(Packed().eval(), (x, lengths)), [x, lengths])


def test_cell_stepped_in_a_loop_over_a_sequence_of_run_time_length():
    torch.manual_seed(9)
    m = CellLoop().eval()
    mod, params = import_module(torch.jit.script(m), [torch.randn(5, 2, 4)], shapes=[(-1, 2, 4)])
    assert "control.loop" in str(mod)
    for length in (1, 3, 8):
        x = torch.randn(length, 2, 4)
        with torch.no_grad():
            expected = m(x).numpy()
        assert_close(run_anvil(mod, params, [x]), [expected], f"length {length}")
