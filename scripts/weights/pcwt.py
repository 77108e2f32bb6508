"""Writer and reader of PerfCard weights files ("PCWT", docs/weights-format.md), the Python side of
core/src/weights_file.cpp. Training scripts write predictor files with it; the C++ reader reads them.

Standard library + numpy only. Run with Debian's Python (/usr/bin/python3).

    from scripts.weights import pcwt
    data = pcwt.write_bytes(
        {"predictor": "latency", "predictor.version": 3, "feature_schema.hash": "sha256:...",
         "training.provenance": "...", "training.sources": ["mlperf-inference-v4.1"],
         "training.commit": "abc123", "training.date": "2025-01-10", "created_by": "train_latency.py"},
        {"w1": pcwt.Q8_0(w1), "b1": b1.astype(np.float32)})
    f = pcwt.read_bytes(data)            # validated like the C++ reader, same messages
    f.metadata["predictor"], f.tensors["w1"].to_f32()

Quantization is bit-identical to core/src/quant.cpp: per block of 32 values along the last dimension,
d = fp16(amax / qmax) (fp32 division, fp16 round-to-nearest-even), q = clip(rint(x / d)) in fp32
(ties to even), qmax 127 for q8_0 and 7 for q4_0.

Command line:  /usr/bin/python3 -m scripts.weights.pcwt FILE...   prints the header, metadata and tensor table of each file.
"""
import struct
import sys

import numpy as np

MAGIC = b"PCWT"
MAJOR, MINOR = 1, 0
HEADER = struct.Struct("<4sHHIIIIQQ")  # magic, major, minor, alignment, n_meta, n_tensors, reserved,
assert HEADER.size == 40               # data_offset, data_size

MAX_METADATA = 4096
MAX_TENSORS = 65536
MAX_NAME_BYTES = 256
MAX_STRING_BYTES = 1 << 20
MAX_ARRAY_LENGTH = 1 << 20
MAX_RANK = 8
BLOCK = 32

# Metadata value types.
T_STRING, T_INT64, T_FLOAT64, T_BOOL, T_ARRAY = 1, 2, 3, 4, 5
TYPE_NAMES = {T_STRING: "string", T_INT64: "int64", T_FLOAT64: "float64", T_BOOL: "bool"}

# Tensor dtypes: code -> (name, bytes per element or None for blocks).
DTYPES = {1: ("f32", 4), 2: ("f16", 2), 3: ("bf16", 2), 4: ("f64", 8), 5: ("i8", 1), 6: ("u8", 1),
          7: ("i32", 4), 8: ("i64", 8), 32: ("q8_0", None), 33: ("q4_0", None)}
DTYPE_CODES = {name: code for code, (name, _) in DTYPES.items()}
BLOCK_BYTES = {"q8_0": 34, "q4_0": 18}
NUMPY_DTYPES = {"f32": np.float32, "f16": np.float16, "f64": np.float64, "i8": np.int8, "u8": np.uint8,
                "i32": np.int32, "i64": np.int64, "bf16": np.uint16}
FROM_NUMPY = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16", np.dtype(np.float64): "f64",
              np.dtype(np.int8): "i8", np.dtype(np.uint8): "u8", np.dtype(np.int32): "i32",
              np.dtype(np.int64): "i64"}

REQUIRED_KEYS = [("predictor", "string"), ("predictor.version", "int64"), ("feature_schema.hash", "string"),
                 ("training.provenance", "string"), ("training.sources", "array<string>"),
                 ("training.commit", "string"), ("training.date", "string"), ("created_by", "string")]


class PcwtError(Exception):
    """A malformed file: the message of the C++ reader, and the byte offset (or None)."""

    def __init__(self, message, offset=None):
        self.message = message
        self.offset = offset
        super().__init__(message if offset is None else f"{message} [byte offset {offset}]")


# ------------------------------------------------------------------------------------ fp16 / bf16 / quant

def fp32_to_bf16_bits(x):
    """bfloat16 bits of float32 values, round to nearest even, NaN kept (quiet)."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
    nan = (bits & 0x7FFFFFFF) > 0x7F800000
    rounded = np.where(nan, ((bits >> 16) | 0x40) & 0xFFFF, rounded)
    return rounded.astype(np.uint16)


def bf16_bits_to_fp32(h):
    return (np.asarray(h, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def _quantize(x, qmax, what):
    x = np.ascontiguousarray(x, dtype=np.float32)
    if x.ndim == 0 or x.shape[-1] % BLOCK != 0:
        raise ValueError(f"{what}: the last dimension must be a multiple of 32, shape {list(x.shape)}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{what}: values must be finite")
    b = x.reshape(-1, BLOCK)
    amax = np.max(np.abs(b), axis=1) if b.size else np.zeros(0, np.float32)
    with np.errstate(over="ignore"):
        d16 = (amax / np.float32(qmax)).astype(np.float32).astype(np.float16)  # fp32 division, then RNE
    if np.any(np.isinf(d16)):
        raise ValueError(f"{what}: |x| too large for an fp16 scale")
    d = d16.astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.rint(b / d[:, None])  # fp32 division, ties to even
    r = np.where(d[:, None] == 0, np.float32(0), r)
    q = np.clip(r, -qmax, qmax).astype(np.int8)
    return x.shape, d16, q


def quantize_q8_0(x):
    """float32 array [..., K] (K % 32 == 0) -> uint8 array [..., K/32, 34] of BlockQ8_0."""
    shape, d16, q = _quantize(x, 127, "q8_0")
    blocks = np.empty((q.shape[0], 34), np.uint8)
    blocks[:, 0:2] = d16.astype("<f2").view(np.uint8).reshape(-1, 2)
    blocks[:, 2:] = q.view(np.uint8)
    return blocks.reshape(shape[:-1] + (shape[-1] // BLOCK, 34))


def quantize_q4_0(x):
    """float32 array [..., K] (K % 32 == 0) -> uint8 array [..., K/32, 18] of BlockQ4_0."""
    shape, d16, q = _quantize(x, 7, "q4_0")
    nib = (q.astype(np.int16) + 8).astype(np.uint8)
    blocks = np.empty((q.shape[0], 18), np.uint8)
    blocks[:, 0:2] = d16.astype("<f2").view(np.uint8).reshape(-1, 2)
    blocks[:, 2:] = nib[:, 0::2] | (nib[:, 1::2] << 4)
    return blocks.reshape(shape[:-1] + (shape[-1] // BLOCK, 18))


def dequantize(blocks, dtype, dims):
    """Block bytes (any shape, C order) of q8_0 / q4_0 -> float32 array of `dims` (d * q in fp32)."""
    b = np.frombuffer(bytes(blocks), np.uint8).reshape(-1, BLOCK_BYTES[dtype])
    d = b[:, 0:2].copy().view("<f2").astype(np.float32)  # [n, 1]
    if dtype == "q8_0":
        q = b[:, 2:].view(np.int8).astype(np.float32)
    else:
        lo = (b[:, 2:] & 0xF).astype(np.int16) - 8
        hi = (b[:, 2:] >> 4).astype(np.int16) - 8
        q = np.stack([lo, hi], axis=2).reshape(-1, BLOCK).astype(np.float32)
    return (d * q).astype(np.float32).reshape(tuple(dims))


class Q8_0:
    """A tensor to be stored quantized as q8_0 (the array is the float32 source, last dim % 32 == 0)."""
    dtype = "q8_0"

    def __init__(self, values):
        self.values = np.asarray(values, dtype=np.float32)


class Q4_0(Q8_0):
    dtype = "q4_0"


class BF16:
    """A tensor to be stored as bf16 (rounded from float32)."""

    def __init__(self, values):
        self.values = np.asarray(values, dtype=np.float32)


class Raw:
    """A tensor entry written as given (dtype code, dims, payload bytes): for tests of malformed files."""

    def __init__(self, dtype_code, dims, payload, byte_size=None, offset=None):
        self.dtype_code, self.dims, self.payload = dtype_code, list(dims), bytes(payload)
        self.byte_size = len(self.payload) if byte_size is None else byte_size
        self.offset = offset


class Array:
    """An explicitly typed metadata array: Array("string", []) when the type cannot be inferred."""

    def __init__(self, element, values):
        self.element, self.values = element, list(values)


class RawValue:
    """A metadata value written as given (type code, payload bytes): for tests of newer minor versions."""

    def __init__(self, type_code, payload):
        self.type_code, self.payload = type_code, bytes(payload)


# ------------------------------------------------------------------------------------------------ writing

def _string(s):
    b = s.encode("utf-8")
    return struct.pack("<I", len(b)) + b


def _scalar(kind, v):
    if kind == "string":
        return _string(v)
    if kind == "int64":
        return struct.pack("<q", int(v))
    if kind == "float64":
        return struct.pack("<d", float(v))
    if kind == "bool":
        return struct.pack("<B", 1 if v else 0)
    raise ValueError(f"unknown metadata element type {kind}")


def _kind(v):
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, (int, np.integer)):
        return "int64"
    if isinstance(v, (float, np.floating)):
        return "float64"
    if isinstance(v, str):
        return "string"
    raise TypeError(f"unsupported metadata value {v!r}")


def _value(v):
    """-> (type code, payload bytes)."""
    if isinstance(v, RawValue):
        return v.type_code, v.payload
    if isinstance(v, (list, tuple, Array)):
        if isinstance(v, Array):
            kind, values = v.element, v.values
        else:
            if not v:
                raise TypeError("empty metadata list: give its element type with pcwt.Array(type, [])")
            kind, values = _kind(v[0]), list(v)
        if any(_kind(x) != kind for x in values):
            raise TypeError(f"metadata array elements must all be {kind}: {values!r}")
        code = {"string": T_STRING, "int64": T_INT64, "float64": T_FLOAT64, "bool": T_BOOL}[kind]
        return T_ARRAY, struct.pack("<BI", code, len(values)) + b"".join(_scalar(kind, x) for x in values)
    kind = _kind(v)
    return {"string": T_STRING, "int64": T_INT64, "float64": T_FLOAT64, "bool": T_BOOL}[kind], _scalar(kind, v)


def _tensor_payload(t):
    """-> (dtype code, dims, payload bytes, byte_size, forced offset or None)."""
    if isinstance(t, Raw):
        return t.dtype_code, t.dims, t.payload, t.byte_size, t.offset
    if isinstance(t, Q8_0):
        blocks = quantize_q8_0(t.values) if t.dtype == "q8_0" else quantize_q4_0(t.values)
        payload = blocks.tobytes()
        return DTYPE_CODES[t.dtype], list(t.values.shape), payload, len(payload), None
    if isinstance(t, BF16):
        payload = fp32_to_bf16_bits(t.values).astype("<u2").tobytes()
        return DTYPE_CODES["bf16"], list(t.values.shape), payload, len(payload), None
    a = np.asarray(t)
    if a.dtype not in FROM_NUMPY:
        raise TypeError(f"unsupported tensor dtype {a.dtype}")
    name = FROM_NUMPY[a.dtype]
    payload = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")).tobytes()
    return DTYPE_CODES[name], list(a.shape), payload, len(payload), None


def _align(n, a):
    return (n + a - 1) // a * a


def write_bytes(metadata, tensors, alignment=64, major=MAJOR, minor=MINOR, check_required=True):
    """metadata: {key: str | int | float | bool | list | Array | RawValue};
    tensors: {name: np.ndarray | Q8_0 | Q4_0 | BF16 | Raw} in file order. Returns the file's bytes."""
    if check_required:
        missing = [k for k, _ in REQUIRED_KEYS if k not in metadata]
        if missing:
            raise ValueError(f"missing required metadata {missing}")
    meta = b""
    for key, v in metadata.items():
        code, payload = _value(v)
        meta += _string(key) + struct.pack("<BI", code, len(payload)) + payload
    table = b""
    data = bytearray()
    for name, t in tensors.items():
        code, dims, payload, byte_size, offset = _tensor_payload(t)
        if offset is None:
            offset = _align(len(data), alignment)
        if len(data) < offset:
            data += bytes(offset - len(data))
        if offset + len(payload) > len(data):
            data += bytes(offset + len(payload) - len(data))
        data[offset:offset + len(payload)] = payload
        table += _string(name) + struct.pack("<II", code, len(dims)) + struct.pack(f"<{len(dims)}Q", *dims)
        table += struct.pack("<QQ", offset, byte_size)
    data_offset = _align(HEADER.size + len(meta) + len(table), alignment)
    head = HEADER.pack(MAGIC, major, minor, alignment, len(metadata), len(tensors), 0, data_offset, len(data))
    body = head + meta + table
    return body + bytes(data_offset - len(body)) + bytes(data)


def write(path, metadata, tensors, **kwargs):
    data = write_bytes(metadata, tensors, **kwargs)
    with open(path, "wb") as f:
        f.write(data)
    return data


def set_metadata(data, values, remove=()):
    """The file `data` with each metadata key of `values` set and each key of `remove` gone: a key the file has
    keeps its place with the new value, a new one is appended; every other byte of metadata, the tensor table and
    the data are kept (tensor offsets are relative to the data section, which only moves). For figures measured
    after training (what a predictor does on devices it never saw), so that stating them does not retrain what
    the file holds."""
    read_bytes(data)  # a valid file, or the reader's error
    data = bytes(data)
    _, major, minor, alignment, n_meta, n_tensors, reserved, data_offset, data_size = HEADER.unpack_from(data, 0)
    pos, entries = HEADER.size, []
    for _ in range(n_meta):
        start = pos
        n = struct.unpack_from("<I", data, pos)[0]
        key = data[pos + 4:pos + 4 + n].decode("utf-8")
        pos += 4 + n + 1
        pos += 4 + struct.unpack_from("<I", data, pos)[0]
        entries.append((key, data[start:pos]))
    meta_end = pos
    for _ in range(n_tensors):
        pos += 4 + struct.unpack_from("<I", data, pos)[0]
        ndims = struct.unpack_from("<II", data, pos)[1]
        pos += 8 + 8 * ndims + 16

    def encoded(key):
        code, payload = _value(values[key])
        return _string(key) + struct.pack("<BI", code, len(payload)) + payload

    if set(values) & set(remove):
        raise ValueError(f"metadata {sorted(set(values) & set(remove))} both set and removed")
    entries = [(k, raw) for k, raw in entries if k not in remove]
    present = {k for k, _ in entries}
    meta = b"".join(encoded(k) if k in values else raw for k, raw in entries)
    meta += b"".join(encoded(k) for k in values if k not in present)
    body = meta + data[meta_end:pos]
    offset = _align(HEADER.size + len(body), alignment)
    n_new = len(entries) + sum(k not in present for k in values)
    head = HEADER.pack(MAGIC, major, minor, alignment, n_new, n_tensors, reserved, offset, data_size)
    return head + body + bytes(offset - HEADER.size - len(body)) + data[data_offset:]


# ------------------------------------------------------------------------------------------------ reading

def _q(s):
    """A name for messages, as the C++ reader quotes it."""
    out = []
    for i, c in enumerate(s.encode("utf-8", "surrogateescape")):
        if i >= 80:
            out.append("...")
            break
        out.append(f"\\x{c:02x}" if c < 0x20 or c == 0x7F or c in (0x5C, 0x27) else chr(c))
    return "'" + "".join(out) + "'"


class Tensor:
    def __init__(self, name, dtype_code, dims, offset, byte_size, data, entry_offset):
        self.name, self.dtype_code, self.dims = name, dtype_code, dims
        self.offset, self.byte_size, self.data, self.entry_offset = offset, byte_size, data, entry_offset

    @property
    def dtype(self):
        return DTYPES[self.dtype_code][0] if self.dtype_code in DTYPES else f"dtype#{self.dtype_code}"

    def numpy(self):
        """Plain dtypes as a numpy array of dims (bf16 as uint16 bits); q8_0 / q4_0 as uint8 block bytes."""
        if self.dtype in BLOCK_BYTES:
            return np.frombuffer(self.data, np.uint8).reshape(tuple(self.dims[:-1]) + (
                self.dims[-1] // BLOCK, BLOCK_BYTES[self.dtype]))
        return np.frombuffer(self.data, np.dtype(NUMPY_DTYPES[self.dtype]).newbyteorder("<")).reshape(
            tuple(self.dims))

    def to_f32(self):
        if self.dtype in BLOCK_BYTES:
            return dequantize(self.data, self.dtype, self.dims)
        if self.dtype == "bf16":
            return bf16_bits_to_fp32(self.numpy())
        return self.numpy().astype(np.float32)


class WeightsFile:
    def __init__(self):
        self.major = self.minor = self.alignment = self.data_offset = self.data_size = 0
        self.metadata = {}
        self.metadata_types = {}
        self.metadata_offsets = {}
        self.tensors = {}


class _Cursor:
    def __init__(self, data, pos, end, overrun):
        self.data, self.pos, self.end, self.overrun = data, pos, end, overrun

    def need(self, n, what):
        if n > self.end - self.pos:
            raise self.overrun(self.pos, n, self.end - self.pos, what)

    def unpack(self, fmt, what):
        n = struct.calcsize(fmt)
        self.need(n, what)
        v = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += n
        return v if len(v) > 1 else v[0]

    def take(self, n, what):
        self.need(n, what)
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b


def _read_string(c, cap, what):
    at = c.pos
    n = c.unpack("<I", what + " length")
    if n > cap:
        raise PcwtError(f"{what} length {n} exceeds the limit of {cap} bytes", at)
    return bytes(c.take(n, what)).decode("utf-8", "surrogateescape")


def _read_scalar(c, t, what):
    if t == T_STRING:
        return _read_string(c, MAX_STRING_BYTES, what + " string")
    if t == T_INT64:
        return c.unpack("<q", what + " int64")
    if t == T_FLOAT64:
        return c.unpack("<d", what + " float64")
    at = c.pos
    b = c.unpack("<B", what + " bool")
    if b > 1:
        raise PcwtError(f"{what}: bool value {b} is neither 0 nor 1", at)
    return b == 1


def read_bytes(data):
    """Parses and validates like perfcard::read_weights; raises PcwtError with the same messages."""
    data = memoryview(bytes(data)) if not isinstance(data, memoryview) else data
    size = len(data)
    if size < 4:
        raise PcwtError(f'not a PerfCard weights file ({size} bytes, shorter than the magic "PCWT")', 0)
    magic = bytes(data[:4])
    if magic != MAGIC:
        if all(0x20 <= c < 0x7F and c != 0x22 for c in magic):
            shown = '"' + magic.decode("ascii") + '"'
        else:
            shown = "bytes " + " ".join(f"{c:02x}" for c in magic)
        raise PcwtError(f'not a PerfCard weights file (magic {shown}, expected "PCWT")', 0)

    def truncated_header():
        return PcwtError(f"truncated header: {HEADER.size} bytes needed, the file has {size}", size)

    if size < 8:
        raise truncated_header()
    w = WeightsFile()
    w.major, w.minor = struct.unpack_from("<HH", data, 4)
    if w.major > MAJOR:
        raise PcwtError(f"weights file format {w.major}.x is newer than this build reads ({MAJOR}.x); "
                        "update PerfCard", 4)
    if w.major < MAJOR:
        raise PcwtError(f"weights file format {w.major}.x is older than this build reads ({MAJOR}.x); "
                        "regenerate the file", 4)
    if size < HEADER.size:
        raise truncated_header()
    _, _, _, w.alignment, n_meta, n_tensors, _, w.data_offset, w.data_size = HEADER.unpack_from(data, 0)
    a = w.alignment
    if a < 8 or a > 65536 or a & (a - 1):
        raise PcwtError(f"alignment {a} is not a power of two between 8 and 65536", 8)
    if n_meta > MAX_METADATA:
        raise PcwtError(f"metadata count {n_meta} exceeds the limit of {MAX_METADATA}", 12)
    if n_tensors > MAX_TENSORS:
        raise PcwtError(f"tensor count {n_tensors} exceeds the limit of {MAX_TENSORS}", 16)
    if w.data_offset < HEADER.size:
        raise PcwtError(f"data section offset {w.data_offset} lies inside the {HEADER.size}-byte header", 24)
    if w.data_offset % a:
        raise PcwtError(f"data section offset {w.data_offset} is not a multiple of the alignment {a}", 24)
    end = w.data_offset + w.data_size
    if end > size:
        declared = str(end) if end < 1 << 64 else "more than 2^64"
        raise PcwtError(f"truncated file: the header declares {declared} bytes (data section at "
                        f"{w.data_offset}, {w.data_size} bytes), the file has {size}", size)
    if end != size:
        raise PcwtError(f"{size - end} unexpected bytes after the data section", end)

    section = ["metadata"]

    def table_overrun(pos, need, avail, what):
        return PcwtError(f"truncated {section[0]}: {what} needs {need} bytes, only {avail} remain before the "
                         f"data section at byte offset {w.data_offset}", pos)

    c = _Cursor(data, HEADER.size, w.data_offset, table_overrun)
    newer_minor = w.minor > MINOR
    for i in range(n_meta):
        entry = c.pos
        key = _read_string(c, MAX_NAME_BYTES, f"metadata entry {i} key")
        if not key:
            raise PcwtError(f"metadata entry {i} has an empty key", entry)
        what = f"metadata {_q(key)}"
        if key in w.metadata or key in w.metadata_types:
            raise PcwtError(f"duplicate metadata key {_q(key)}", entry)
        at_type = c.pos
        t = c.unpack("<B", what + " type")
        value_size = c.unpack("<I", what + " value size")
        c.need(value_size, what + " value")
        if t not in TYPE_NAMES and t != T_ARRAY:
            if newer_minor:
                c.take(value_size, what + " value")
                w.metadata_types[key] = f"type#{t}"
                continue
            raise PcwtError(f"{what} has unknown value type {t}", at_type)

        def value_overrun(pos, need, avail, vwhat, value_size=value_size):
            return PcwtError(f"{vwhat} needs {need} bytes, only {avail} remain of its {value_size}-byte value", pos)

        v = _Cursor(data, c.pos, c.pos + value_size, value_overrun)
        if t in TYPE_NAMES:
            value, tname = _read_scalar(v, t, what), TYPE_NAMES[t]
        else:
            at_elem = v.pos
            elem = v.unpack("<B", what + " array element type")
            if elem not in TYPE_NAMES:
                raise PcwtError(f"{what} has unknown array element type {elem}", at_elem)
            at_count = v.pos
            count = v.unpack("<I", what + " array length")
            if count > MAX_ARRAY_LENGTH:
                raise PcwtError(f"{what} array length {count} exceeds the limit of {MAX_ARRAY_LENGTH}", at_count)
            min_elem = {T_BOOL: 1, T_STRING: 4}.get(elem, 8)
            if count * min_elem > v.end - v.pos:
                raise PcwtError(f"{what} array length {count} does not fit its {value_size}-byte value", at_count)
            value = [_read_scalar(v, elem, f"{what} element {k}") for k in range(count)]
            tname = f"array<{TYPE_NAMES[elem]}>"
        if v.pos != v.end:
            raise PcwtError(f"{what} value takes {v.pos - c.pos} bytes but its size field says {value_size}",
                            at_type + 1)
        c.take(value_size, what + " value")
        w.metadata[key] = value
        w.metadata_types[key] = tname
        w.metadata_offsets[key] = entry

    section[0] = "tensor table"
    used = []
    for i in range(n_tensors):
        entry = c.pos
        name = _read_string(c, MAX_NAME_BYTES, f"tensor entry {i} name")
        if not name:
            raise PcwtError(f"tensor entry {i} has an empty name", entry)
        what = f"tensor {_q(name)}"
        if name in w.tensors:
            raise PcwtError(f"duplicate tensor name {_q(name)}", entry)
        at_dtype = c.pos
        code = c.unpack("<I", what + " dtype")
        rank = c.unpack("<I", what + " rank")
        if rank > MAX_RANK:
            raise PcwtError(f"{what}: rank {rank} exceeds the limit of {MAX_RANK}", at_dtype + 4)
        dims = [c.unpack("<Q", what + " dims") for _ in range(rank)]
        at_offset = c.pos
        offset = c.unpack("<Q", what + " data offset")
        byte_size = c.unpack("<Q", what + " byte size")
        shape = "[" + ", ".join(str(d) for d in dims) + "]"
        if code not in DTYPES and not newer_minor:
            raise PcwtError(f"{what} has unknown dtype code {code}", at_dtype)
        if code in DTYPES:
            dname, elem_bytes = DTYPES[code]
            n = 1
            for d in dims:
                if d != 0 and n > (1 << 60) // d:
                    raise PcwtError(f"{what}: shape {shape} has too many elements", at_dtype + 8)
                n *= d
            if elem_bytes is None:
                if not dims or dims[-1] % BLOCK:
                    raise PcwtError(f"{what}: {dname} needs a last dimension that is a multiple of 32, "
                                    f"shape {shape}", at_dtype + 8)
                expected = n // BLOCK * BLOCK_BYTES[dname]
            else:
                expected = n * elem_bytes
            if byte_size != expected:
                raise PcwtError(f"{what}: byte size {byte_size} does not match {shape} x {dname} = "
                                f"{expected} bytes", at_offset + 8)
        if offset % a:
            raise PcwtError(f"{what}: data offset {offset} is not a multiple of the alignment {a}", at_offset)
        if offset > w.data_size or byte_size > w.data_size - offset:
            raise PcwtError(f"{what}: data [{offset}, +{byte_size}) lies outside the {w.data_size}-byte data "
                            "section", at_offset)
        start = w.data_offset + offset
        w.tensors[name] = Tensor(name, code, dims, offset, byte_size, data[start:start + byte_size], entry)
        if byte_size:
            used.append((offset, offset + byte_size, name))
    used.sort(key=lambda s: s[0])
    for prev, cur in zip(used, used[1:]):
        if cur[0] < prev[1]:
            ta, tb = w.tensors[prev[2]], w.tensors[cur[2]]
            later, other = (ta, tb) if ta.entry_offset > tb.entry_offset else (tb, ta)
            raise PcwtError(f"tensor {_q(later.name)}: data [{later.offset}, +{later.byte_size}) overlaps tensor "
                            f"{_q(other.name)} [{other.offset}, +{other.byte_size})", later.entry_offset)
    for key, tname in REQUIRED_KEYS:
        if key not in w.metadata:
            raise PcwtError(f"weights file lacks required metadata {_q(key)}")
        if w.metadata_types[key] != tname:
            raise PcwtError(f"metadata {_q(key)} is {w.metadata_types[key]}, expected {tname}",
                            w.metadata_offsets[key])
    return w


def read(path):
    with open(path, "rb") as f:
        return read_bytes(f.read())


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip().splitlines()[0])
        print("usage: /usr/bin/python3 -m scripts.weights.pcwt FILE...   (prints header, metadata and tensors)")
        return 0 if argv else 2
    status = 0
    for path in argv:
        try:
            w = read(path)
        except (OSError, PcwtError) as e:
            print(f"{path}: {e}", file=sys.stderr)
            status = 1
            continue
        print(f"{path}: PCWT {w.major}.{w.minor}, alignment {w.alignment}, data at {w.data_offset} "
              f"({w.data_size} bytes)")
        for k, v in w.metadata.items():
            print(f"  {k} ({w.metadata_types[k]}) = {v!r}")
        for t in w.tensors.values():
            print(f"  tensor {t.name}: {t.dtype} {t.dims} at +{t.offset} ({t.byte_size} bytes)")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
