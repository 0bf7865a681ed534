"""
tickinfer: Keras models compiled to allocation-free plans, batch 1, from Python.
"""

from collections.abc import Sequence
from typing import Any

import numpy
import numpy.typing


class Error(RuntimeError):
    pass

class FeatureStore:
    """
    A running pipeline's shared-memory feature store ([features] shm = NAME), read-only.
    FeatureStore('NAME') attaches; read(instrument) returns that instrument's latest vector.
    """

    def __init__(self, name: str) -> None:
        """
        Attaches to store NAME (as in the run's config; 'shm:NAME' works too). Raises tickinfer.Error.
        """

    @property
    def names(self) -> list[str]:
        """Column names, in vector order."""

    @property
    def set_name(self) -> str: ...

    @property
    def width(self) -> int: ...

    @property
    def instruments(self) -> list[int]:
        """Instrument ids, in slot order."""

    @property
    def ttl_ns(self) -> int:
        """Entries published longer ago than this read as 'stale' (0: never)."""

    @property
    def feature_set_id(self) -> int: ...

    @property
    def writer_pid(self) -> int: ...

    @property
    def heartbeat_ns(self) -> int:
        """
        The writer's last heartbeat, CLOCK_REALTIME ns (compare with time.time_ns()).
        """

    def writer_state(self, stale_after_s: float = 2.0, now_ns: int = -1) -> str:
        """
        'alive', 'stale' (no heartbeat for stale_after_s) or 'restarted' (a new writer attached).
        """

    def read(self, instrument: int, now_ns: int = -1) -> dict:
        """
        The instrument's latest entry: a dict with status ('ok', 'stale', 'empty', 'busy'), values
        (float64 array, None when empty), updates, tick_seq, exchange_ts_ns, bar, published_ns,
        all_warm, window_ready. now_ns: the time the TTL is judged at (-1: now; 0: no TTL check).
        """

    def snapshot(self, now_ns: int = -1) -> list:
        """Every instrument's entry, in slot order (see read)."""

    def __repr__(self) -> str: ...

class FeatureRing:
    """
    A running pipeline's feature ring ([features] ring = NAME): every vector, in order.
    Each FeatureRing reads at its own position; the writer never waits for it.
    """

    def __init__(self, name: str, from_start: bool = False) -> None:
        """
        Attaches to ring NAME; from_start: begin at the oldest record still held (else at the next).
        """

    @property
    def names(self) -> list[str]: ...

    @property
    def width(self) -> int: ...

    @property
    def capacity(self) -> int: ...

    @property
    def missed(self) -> int:
        """Records lost to the writer lapping this reader."""

    @property
    def lag(self) -> int:
        """Records written, not yet read."""

    def poll(self, max_records: int = 65536) -> dict:
        """
        The records published since the last poll (at most max_records), as a dict of lists
        (instrument, tick_seq, exchange_ts_ns, published_ns) and values, a [n, width] float64 array.
        """

class ItchReader:
    """
    NASDAQ TotalView-ITCH 5.0 (day file, gzip, pcap/pcapng) into columnar numpy tables, batch by batch (docs/python.md).
    """

    def __init__(self, path: str, symbols: Sequence[str] = [], levels: int = 10, tables: Sequence[str] = ['depth', 'bbo', 'trades', 'orders'], batch_messages: int = 4194304) -> None: ...

    def next_batch(self) -> object:
        """
        The next batch: a dict of tables (each a dict of numpy columns), or None.
        """

    @property
    def symbols(self) -> dict:
        """locate -> symbol, from the Stock Directory so far."""

    @property
    def kind(self) -> str: ...

    def stats(self) -> dict:
        """Messages, decode and book integrity counters so far."""

def itch_features(spec: str, path: str, symbols: Sequence[str], date: str = '') -> tuple:
    """
    The book features of a feature specification over an ITCH source: (column names, float64 [rows, columns]), as `tickinfer features SPEC --input PATH --symbols ...` writes them.
    """

class TensorInfo:
    """A model input or output: Keras layer name and shape (no batch axis)."""

    @property
    def name(self) -> str: ...

    @property
    def shape(self) -> tuple: ...

    def __repr__(self) -> str: ...

class LayerStats:
    """Static cost of one layer for one window-mode inference."""

    @property
    def name(self) -> str: ...

    @property
    def keras_class(self) -> str: ...

    @property
    def output_shape(self) -> tuple: ...

    @property
    def params(self) -> int: ...

    @property
    def flops(self) -> int:
        """2 per multiply-add, 1 per elementwise op"""

    @property
    def weight_bytes(self) -> int:
        """fp32 weight bytes read per inference"""

class ModelStats:
    """Static cost of one inference (batch 1, window mode)."""

    @property
    def layers(self) -> list[LayerStats]: ...

    @property
    def params(self) -> int: ...

    @property
    def flops(self) -> int: ...

    @property
    def weight_bytes(self) -> int: ...

class Plan:
    """
    A compiled model: packed weights plus one private arena (and, in stream mode, the
    recurrent state). Made by Model.compile(). One call at a time per plan: give each
    thread its own plan.clone() (clones share the packed weights).
    """

    def run(self, x: numpy.typing.ArrayLike | Sequence[numpy.typing.ArrayLike], out: numpy.typing.NDArray[numpy.float32] | Sequence[numpy.typing.NDArray[numpy.float32]] | None = None, check_finite: bool = True) -> Any:
        """
        Runs the plan once.

        x: the input, shaped like input_shapes[0] (optionally with a leading axis of 1); a list
        of arrays for a model with several inputs. A C-contiguous float32 array is read in
        place (no copy); anything else is converted to one first.
        out: optional writable C-contiguous float32 array(s), written in place and returned;
        with it the call allocates nothing. Otherwise new arrays are returned (a list when
        the model has several outputs).
        check_finite: refuse inputs holding NaN or Inf (tickinfer.Error).
        Stream mode: x is one tick ([features]); the recurrent state carries to the next call.
        Raises tickinfer.Error on a wrong shape, a non-finite input or concurrent use.
        """

    def run_into(self, x: numpy.typing.ArrayLike | Sequence[numpy.typing.ArrayLike], out: numpy.typing.NDArray[numpy.float32] | Sequence[numpy.typing.NDArray[numpy.float32]]) -> Any:
        """
        run(x, out=out) with positional arguments only: the cheapest call from Python (no
        keyword parsing, no allocation). Returns out.
        """

    def run_batch(self, x: numpy.typing.ArrayLike | Sequence[numpy.typing.ArrayLike], out: numpy.typing.NDArray[numpy.float32] | Sequence[numpy.typing.NDArray[numpy.float32]] | None = None, check_finite: bool = True) -> Any:
        """
        Runs N rows back to back in C++ with the GIL released.

        x: shaped [N, *input_shapes[i]] (a list for several inputs, same N).
        Window mode: N independent rows, the same as N run() calls.
        Stream mode: N consecutive ticks of one sequence; the state carries across the rows
        and on to the next call (reset_state() starts a new sequence).
        out: optional [N, *output_shapes[i]] float32 array(s) written in place.
        """

    def reset_state(self) -> None:
        """
        Stream mode: zero the recurrent state (start of a new sequence). Window mode: no-op.
        """

    def clone(self) -> Plan:
        """A new plan sharing these packed weights, with its own arena and state."""

    def describe(self) -> str:
        """The compiled steps, one per line."""

    @property
    def mode(self) -> str:
        """'window' or 'stream'."""

    @property
    def isa(self) -> str:
        """Kernel set in use."""

    @property
    def input_names(self) -> list[str]: ...

    @property
    def output_names(self) -> list[str]: ...

    @property
    def input_shapes(self) -> list:
        """Per-run input shapes (no batch axis; [features] in stream mode)."""

    @property
    def output_shapes(self) -> list:
        """Per-run output shapes."""

    @property
    def arena_bytes(self) -> int:
        """Activation and state scratch owned by this plan, in bytes."""

    @property
    def flops(self) -> int:
        """FLOPs of one run (2 per multiply-add)."""

    @property
    def weight_bytes(self) -> int:
        """Bytes of fp32 weights one run reads."""

    @property
    def weight_footprint_bytes(self) -> int:
        """Bytes of packed weights kept resident (shared by clones)."""

    def __repr__(self) -> str: ...

class Model:
    """A loaded Keras model (immutable; safe to share between threads)."""

    @property
    def path(self) -> str:
        """The file it was loaded from."""

    @property
    def inputs(self) -> list[TensorInfo]:
        """list[TensorInfo], in order."""

    @property
    def outputs(self) -> list[TensorInfo]:
        """list[TensorInfo], in order."""

    def stats(self) -> ModelStats:
        """Parameters, FLOPs and weight bytes per layer."""

    def compile(self, isa: str = '', mode: str = 'window', window_length: int = 0, rounding: str = 'tflite', device: str = 'cpu', incremental: bool = False, cuda_form: str = 'auto', cuda_precision: str = 'fp32') -> Plan:
        """
        Compiles a Plan.

        isa: '' for the fastest kernels this CPU supports (or $TICKINFER_ISA), or one of
        'scalar', 'portable', 'avx2', 'avx512' (tickinfer.Error if the CPU lacks it).
        mode: 'window' (each run takes the whole [T, features] window, state from zero: what
        Keras computes) or 'stream' (one tick per run, recurrent state carried).
        window_length: window mode, for an input saved with an unknown time length.
        rounding: TFLite and quantized models' int8 requantization: 'tflite' (as the TFLite
        interpreters on PyPI), 'double' (a default TFLite source build) or 'single'
        (a TFLITE_SINGLE_ROUNDING build).
        device: 'cpu', or 'cuda' / 'cuda:N' for that GPU (a resident kernel for an LSTM stack
        with a Dense head, the CUDA graph or program form for any other Keras graph, the integer program
        with TFLite's bits for an int8 TFLite or .tkq file; docs/gpu.md).
        incremental: window mode; when a window is the previous one moved by one row,
        convolutions and per-row layers recompute only the rows that change (docs/incremental.md).
        cuda_form: with device 'cuda': 'auto' (the resident LSTM kernel for an LSTM stack, else
        the graph or program form, whichever the card runs faster), 'graph' (the CUDA graph form for every model)
        or 'program' (one never-exiting kernel that polls for requests; docs/gpu.md).
        cuda_precision: with device 'cuda': the weight matrices' storage, 'fp32', 'fp16' or 'bf16',
        or 'W/A' for the matrices and the layer outputs ('fp16/fp16'), then ',LAYER=FORMAT' per
        layer (`tickinfer cuda-precision` measures each layer's error).
        Raises tickinfer.Error (e.g. stream mode on a model with a Flatten over time).
        """

    def __repr__(self) -> str: ...

def load(path: str, tflite_engine: str = 'auto') -> Model:
    """
    Loads a model file (Keras .keras / .h5, SavedModel, ONNX, TFLite, .tkq; detected from the content).
    tflite_engine: a float TFLite file on the graph engine when it lifts ('auto'), always on the TFLite
    interpreter ('interpreter'), or the graph engine or an error ('graph').
    Raises tickinfer.Error naming the file, layer and option for anything unreadable or unsupported.
    """
