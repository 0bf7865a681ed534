"""Writes small .tflite flatbuffers from a plain description, with TFLite's own schema bindings.

The differential fidelity test (tools/make_fidelity_models.py) makes thousands of one- or
two-op models whose weights, scales and zero points it chooses itself; the TFLiteConverter cannot
be told to put a product exactly on a rounding tie or a weight at -128, so the files are written
directly. The bindings are the object API ai-edge-litert ships (schema_py_generated), so a file
is what TFLite's own reader expects, field for field.
"""
import flatbuffers
import numpy as np
from ai_edge_litert import schema_py_generated as S

F32, I32, I8, I16 = 0, 2, 9, 7
NP_TYPE = {F32: np.float32, I32: np.int32, I8: np.int8, I16: np.int16}


class ModelWriter:
    """One subgraph: add tensors and operators, then finish() to bytes."""

    def __init__(self):
        self.tensors = []
        self.buffers = [S.BufferT()]  # buffer 0 is the empty sentinel
        self.ops = []
        self.codes = []
        self.inputs = []
        self.outputs = []

    def tensor(self, name, shape, ttype, scale=None, zero_point=None, axis=0, data=None, sparsity=None,
               variable=False, raw=None):
        """Adds a tensor; `data` (a numpy array) makes it a constant, `raw` gives its bytes as stored
        (a sparse tensor's compressed values). Returns its index."""
        t = S.TensorT()
        t.name = name.encode()
        t.shape = np.asarray(shape, dtype=np.int32)
        t.type = ttype
        t.isVariable = variable
        if scale is not None:
            q = S.QuantizationParametersT()
            q.scale = np.asarray(np.atleast_1d(scale), dtype=np.float32)
            zp = np.zeros(len(q.scale), np.int64) if zero_point is None else np.atleast_1d(zero_point)
            q.zeroPoint = np.asarray(zp, dtype=np.int64)
            q.quantizedDimension = axis
            t.quantization = q
        if data is not None or raw is not None:
            b = S.BufferT()
            payload = raw if raw is not None else np.ascontiguousarray(data, dtype=NP_TYPE[ttype]).tobytes()
            b.data = np.frombuffer(payload, dtype=np.uint8)
            self.buffers.append(b)
            t.buffer = len(self.buffers) - 1
        else:
            t.buffer = 0
        t.sparsity = sparsity
        self.tensors.append(t)
        return len(self.tensors) - 1

    def op(self, code, inputs, outputs, options_type=0, options=None, intermediates=None):
        if code not in self.codes:
            self.codes.append(code)
        o = S.OperatorT()
        o.opcodeIndex = self.codes.index(code)
        o.inputs = np.asarray(inputs, dtype=np.int32)
        o.outputs = np.asarray(outputs, dtype=np.int32)
        o.builtinOptionsType = options_type
        o.builtinOptions = options
        if intermediates:
            o.intermediates = np.asarray(intermediates, dtype=np.int32)
        self.ops.append(o)

    def finish(self, description="tickinfer fidelity model"):
        m = S.ModelT()
        m.version = 3
        m.description = description.encode()
        m.operatorCodes = []
        for code in self.codes:
            c = S.OperatorCodeT()
            c.builtinCode = code
            c.deprecatedBuiltinCode = min(code, 127)
            c.version = 1
            m.operatorCodes.append(c)
        sg = S.SubGraphT()
        sg.tensors = self.tensors
        sg.operators = self.ops
        sg.inputs = np.asarray(self.inputs, dtype=np.int32)
        sg.outputs = np.asarray(self.outputs, dtype=np.int32)
        sg.name = b"main"
        m.subgraphs = [sg]
        m.buffers = self.buffers
        b = flatbuffers.Builder(4096)
        b.Finish(m.Pack(b), file_identifier=b"TFL3")
        return bytes(b.Output())


def block_sparsity(dense, block):
    """TFLite's block-sparse encoding of a 2-D [rows, cols] constant in 1 x `block` blocks along the
    columns (what the converter writes for int8 1x16): traversal [0, 1, 2], block_map [1],
    dims DENSE rows, CSR over block columns, DENSE block. Returns (SparsityParametersT, values)."""
    rows, cols = dense.shape
    assert cols % block == 0
    segments, indices, values = [0], [], []
    for r in range(rows):
        for bc in range(cols // block):
            blk = dense[r, bc * block:(bc + 1) * block]
            if np.any(blk != 0):
                indices.append(bc)
                values.append(blk)
        segments.append(len(indices))
    sp = S.SparsityParametersT()
    sp.traversalOrder = np.asarray([0, 1, 2], np.int32)
    sp.blockMap = np.asarray([1], np.int32)
    sp.dimMetadata = [_dense_dim(rows), _csr_dim(segments, indices), _dense_dim(block)]
    vals = np.concatenate(values) if values else np.zeros(0, dense.dtype)
    return sp, vals.astype(dense.dtype)


def random_sparsity(dense):
    """Element-wise CSR (traversal [0, 1]: DENSE rows, CSR columns), as the converter encodes
    random sparsity before a DENSIFY."""
    rows, cols = dense.shape
    segments, indices, values = [0], [], []
    for r in range(rows):
        for c in range(cols):
            if dense[r, c] != 0:
                indices.append(c)
                values.append(dense[r, c])
        segments.append(len(indices))
    sp = S.SparsityParametersT()
    sp.traversalOrder = np.asarray([0, 1], np.int32)
    sp.dimMetadata = [_dense_dim(rows), _csr_dim(segments, indices)]
    return sp, np.asarray(values, dtype=dense.dtype)


def _dense_dim(n):
    d = S.DimensionMetadataT()
    d.format = S.DimensionType.DENSE
    d.denseSize = n
    return d


def _csr_dim(segments, indices):
    d = S.DimensionMetadataT()
    d.format = S.DimensionType.SPARSE_CSR
    wide = max(segments + indices + [0]) > 255
    kind = S.SparseIndexVector.Uint16Vector if wide else S.SparseIndexVector.Uint8Vector
    vec_t = S.Uint16VectorT if wide else S.Uint8VectorT
    dtype = np.uint16 if wide else np.uint8
    seg, ind = vec_t(), vec_t()
    seg.values = np.asarray(segments, dtype)
    ind.values = np.asarray(indices, dtype)
    d.arraySegmentsType, d.arraySegments = kind, seg
    d.arrayIndicesType, d.arrayIndices = kind, ind
    return d
