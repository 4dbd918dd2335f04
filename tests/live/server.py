#!/usr/bin/env python3
"""A TensorFlow-backed stand-in for TF Serving and a PAI-EAS TF processor, for live tests.

    PY="$(bash .ci/venv live)"
    "$PY" tests/live/server.py --model faq=tests/data/models/faq \\
        --model half_plus_two=tests/data/models/half_plus_two --ready /tmp/ready.json

Each SavedModel is loaded into its own `tf.compat.v1.Session` (the serve tag) and every request
becomes one `session.run` with the signature's tensor names, through the same C API call that a
C++ server makes (`TF_SessionRun`), so TensorFlow builds and caches one executor per set of feed
and fetch names exactly as in TF Serving's and the EAS processor's DirectSession. The server
answers, on 127.0.0.1 only, with ports chosen by the OS and written to the ready file:

  gRPC  tensorflow.serving.PredictionService: Predict, GetModelMetadata
  HTTP  TF Serving REST: POST /v1/models/NAME[/versions/N]:predict, GET /v1/models/NAME[/metadata]
        EAS:  POST /api/predict/NAME (EAS PredictRequest -> PredictResponse, token checked)
        EAS queue service: /api/predict/NAME_async (input queue) and /api/predict/NAME_async/sink
        GET /_live/stats: executors built so far and the last requests (this server's own)

tests/live/README.md is the contract (CLI, ready file, endpoints, tokens, messages).
"""

import argparse
import base64
import collections
import hashlib
import hmac
import json
import math
import os
import re
import shutil
import signal
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import grpc  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from google.protobuf import json_format  # noqa: E402
from tensorflow.core.framework import tensor_pb2, types_pb2  # noqa: E402
from tensorflow_serving.apis import (get_model_metadata_pb2, model_pb2,  # noqa: E402
                                     predict_pb2, prediction_service_pb2_grpc)

REPO = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"  # never any other address
DEFAULT_TOKEN = "tfreq-live-token"
ASYNC_SUFFIX = "_async"
SINK_SUFFIX = "/sink"
UID_HEADER = "X-EAS-QueueService-Redis-Uid"
GID_HEADER = "X-EAS-QueueService-Redis-Gid"
REQUEST_ID_HEADER = "X-Eas-Queueservice-Request-Id"
PB_MEDIA = "application/vnd.google.protobuf"
MAX_WAIT_S = 60.0  # longest a queue `get` may block, whatever _timeout_ says
MAX_BODY = 64 << 20


def log(event):
    """One JSON line per event on stderr (the request log)."""
    event.setdefault("t", round(time.time(), 3))
    sys.stderr.write(json.dumps(event, sort_keys=True) + "\n")
    sys.stderr.flush()


# ---------------------------------------------------------------------------------------------
# Status: a TF/gRPC status code and message, as TF Serving returns them
# ---------------------------------------------------------------------------------------------

CODE_NAMES = {0: "OK", 1: "CANCELLED", 2: "UNKNOWN", 3: "INVALID_ARGUMENT", 4: "DEADLINE_EXCEEDED",
              5: "NOT_FOUND", 6: "ALREADY_EXISTS", 7: "PERMISSION_DENIED", 8: "RESOURCE_EXHAUSTED",
              9: "FAILED_PRECONDITION", 10: "ABORTED", 11: "OUT_OF_RANGE", 12: "UNIMPLEMENTED",
              13: "INTERNAL", 14: "UNAVAILABLE", 15: "DATA_LOSS", 16: "UNAUTHENTICATED"}

# tensorflow_serving/model_servers/http_server.cc ToHTTPStatusCode
HTTP_OF_CODE = {0: 200, 1: 499, 2: 500, 3: 400, 4: 504, 5: 404, 6: 409, 7: 403, 8: 429, 9: 400,
                10: 409, 11: 400, 12: 501, 13: 500, 14: 503, 15: 500, 16: 401}


class Status(Exception):
    """A failed call: code (tensorflow/core/protobuf/error_codes.proto numbering) and message."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message

    def grpc_code(self):
        return getattr(grpc.StatusCode, CODE_NAMES.get(self.code, "UNKNOWN"))


def invalid(msg):
    return Status(3, msg)


# ---------------------------------------------------------------------------------------------
# Protos compiled at start-up: EAS tf_predict.proto and the queue service's frames
# ---------------------------------------------------------------------------------------------

def compile_protos():
    """Runs grpcio-tools' protoc on proto/eas/tf_predict.proto and tests/live/queueservice.proto
    into a temporary directory and imports the generated modules. protoc runs in a child
    process: loaded into this one beside TensorFlow's own protobuf library, it crashes."""
    out = tempfile.mkdtemp(prefix="tfreq-live-pb2-")
    for include, name in ((REPO / "proto", "eas/tf_predict.proto"),
                          (REPO / "tests" / "live", "queueservice.proto")):
        p = subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I%s" % include,
                            "--python_out=%s" % out, name], capture_output=True, text=True,
                           timeout=120)
        if p.returncode != 0:
            sys.exit("server.py: protoc failed on %s (exit %d): %s" % (name, p.returncode, p.stderr))
    sys.path.insert(0, out)
    import importlib
    eas = importlib.import_module("eas.tf_predict_pb2")
    queue = importlib.import_module("queueservice_pb2")
    return eas, queue


EAS, QPB = None, None  # set in main()


# ---------------------------------------------------------------------------------------------
# Tensors: TensorProto / EAS ArrayProto <-> numpy
# ---------------------------------------------------------------------------------------------

def dtype_name(enum):
    """DataTypeString: the C++ spelling (float, double, half, ...)."""
    return {types_pb2.DT_FLOAT: "float", types_pb2.DT_DOUBLE: "double",
            types_pb2.DT_HALF: "half"}.get(enum) or tf.dtypes.as_dtype(enum).name


def shape_list(shape_proto):
    return [d.size for d in shape_proto.dim]


def tensor_to_numpy(alias, tp):
    """A request TensorProto as a numpy array of its own dtype; TF Serving's
    `tensor parsing error` when TensorFlow cannot read it."""
    try:
        return np.asarray(tf.make_ndarray(tp))
    except Exception as e:  # noqa: BLE001 - any failure is the client's malformed tensor
        raise invalid("tensor parsing error: %s" % alias) from e


def numpy_to_tensor(arr, enum):
    """Tensor::AsProtoField: values in the typed field, never tensor_content."""
    tp = tensor_pb2.TensorProto(dtype=enum)
    for d in arr.shape:
        tp.tensor_shape.dim.add().size = int(d)
    flat = arr.reshape(-1)
    if enum == types_pb2.DT_FLOAT:
        tp.float_val.extend(flat.astype(np.float32).tolist())
    elif enum == types_pb2.DT_DOUBLE:
        tp.double_val.extend(flat.tolist())
    elif enum in (types_pb2.DT_INT32, types_pb2.DT_INT16, types_pb2.DT_INT8, types_pb2.DT_UINT8,
                  types_pb2.DT_UINT16, types_pb2.DT_QINT8, types_pb2.DT_QUINT8,
                  types_pb2.DT_QINT16, types_pb2.DT_QUINT16, types_pb2.DT_QINT32):
        tp.int_val.extend(int(v) for v in flat.tolist())
    elif enum == types_pb2.DT_INT64:
        tp.int64_val.extend(flat.tolist())
    elif enum == types_pb2.DT_BOOL:
        tp.bool_val.extend(bool(v) for v in flat.tolist())
    elif enum == types_pb2.DT_STRING:
        tp.string_val.extend(v if isinstance(v, bytes) else str(v).encode() for v in flat.tolist())
    elif enum in (types_pb2.DT_HALF, types_pb2.DT_BFLOAT16):
        tp.half_val.extend(flat.view(np.uint16).tolist())
    elif enum == types_pb2.DT_UINT32:
        tp.uint32_val.extend(flat.tolist())
    elif enum == types_pb2.DT_UINT64:
        tp.uint64_val.extend(flat.tolist())
    elif enum == types_pb2.DT_COMPLEX64:
        tp.scomplex_val.extend(flat.view(np.float32).tolist())
    elif enum == types_pb2.DT_COMPLEX128:
        tp.dcomplex_val.extend(flat.view(np.float64).tolist())
    else:
        tp.tensor_content = flat.tobytes()
    return tp


# EAS ArrayProto value fields by dtype (formats: DeepRec serving/processor/serving/util.cc)
EAS_FIELD = {1: "float_val", 2: "double_val", 3: "int_val", 4: "int_val", 5: "int_val",
             6: "int_val", 7: "string_val", 8: "float_val", 9: "int64_val", 10: "bool_val",
             11: "int_val", 12: "int_val", 13: "int_val", 14: "float_val", 15: "int_val",
             16: "int_val", 17: "int_val", 18: "double_val", 19: "float_val"}


def array_to_numpy(name, ap):
    """An EAS ArrayProto as a numpy array; the processor demands exactly the shape's count."""
    dims = list(ap.array_shape.dim)
    field = EAS_FIELD.get(ap.dtype)
    if field is None:
        raise invalid("input %s: dtype %s cannot be fed (DT_INVALID, DT_RESOURCE or DT_VARIANT)"
                      % (name, EAS.ArrayDataType.Name(ap.dtype)))
    if any(d < 0 for d in dims):
        raise invalid("input %s: negative dimension in array_shape %s" % (name, dims))
    count = int(np.prod(dims, dtype=np.int64)) if dims else 1
    values = list(getattr(ap, field))
    want = count * 2 if ap.dtype in (8, 18) else count
    if len(values) != want:
        raise invalid("input %s: %s of shape %s needs %d values in %s, got %d"
                      % (name, EAS.ArrayDataType.Name(ap.dtype), dims, want, field, len(values)))
    np_dtype = tf.dtypes.as_dtype(ap.dtype).as_numpy_dtype
    if ap.dtype == 7:
        arr = np.array(values, dtype=object)
    elif ap.dtype in (8, 18):
        pairs = np.array(values, dtype=np.float32 if ap.dtype == 8 else np.float64)
        arr = pairs.view(np.complex64 if ap.dtype == 8 else np.complex128)
    else:
        arr = np.array(values).astype(np_dtype)
    return arr.reshape(dims)


def numpy_to_array(arr, enum):
    """A fetched tensor as an EAS ArrayProto (DeepRec Tensor2Response conventions)."""
    ap = EAS.ArrayProto(dtype=enum)
    ap.array_shape.dim.extend(int(d) for d in arr.shape)
    field = EAS_FIELD.get(enum)
    if field is None:
        raise Status(13, "output of dtype %s cannot be written to an EAS ArrayProto" % dtype_name(enum))
    flat = arr.reshape(-1)
    if enum in (8, 18):
        flat = flat.view(np.float32 if enum == 8 else np.float64)
    vals = flat.tolist()
    if enum == 7:
        vals = [v if isinstance(v, bytes) else str(v).encode() for v in vals]
    elif field == "int_val" or field == "int64_val":
        vals = [int(v) for v in vals]
    elif field == "bool_val":
        vals = [bool(v) for v in vals]
    elif field in ("float_val", "double_val"):
        vals = [float(v) for v in vals]
    getattr(ap, field).extend(vals)
    return ap


# ---------------------------------------------------------------------------------------------
# Models: one tf.compat.v1.Session per SavedModel
# ---------------------------------------------------------------------------------------------

class Loaded:
    """One load of a SavedModel: its graph, its session (so its own executor cache) and the
    executor keys run on it so far."""

    def __init__(self, path):
        self.graph = tf.Graph()
        self.session = tf.compat.v1.Session(graph=self.graph)
        t0 = time.perf_counter()
        with self.graph.as_default():
            self.meta_graph = tf.compat.v1.saved_model.loader.load(
                self.session, [tf.compat.v1.saved_model.tag_constants.SERVING], str(path))
        self.load_ms = (time.perf_counter() - t0) * 1e3
        self.executors = []  # {feeds, fetches, first_run_ms} in the order TensorFlow built them
        self.seen = set()


class Model:
    """A SavedModel served under a name: its current load, signatures and version."""

    def __init__(self, name, path, version):
        self.name = name
        self.path = path
        self.version = version
        self.lock = threading.Lock()
        self.loads = 0
        self.current = None
        self.reload()

    def reload(self):
        """Loads the SavedModel again into a new session (as a redeployment does: no executor
        built yet). Calls already running finish on the old session, closed 30 s later."""
        fresh = Loaded(self.path)
        with self.lock:
            old, self.current = self.current, fresh
            self.loads += 1
        self.signatures = dict(fresh.meta_graph.signature_def)
        self.load_ms = fresh.load_ms
        if old is not None:
            t = threading.Timer(30.0, old.session.close)
            t.daemon = True
            t.start()
        return fresh

    def run(self, feeds, fetches):
        """session.run through TF_SessionRun, with no Python-side casting or shape checks
        (a C++ server has none): feeds is [(tensor name, numpy array)], fetches tensor names.
        Returns (outputs, info) where info says whether this call built a new executor."""
        with self.lock:
            cur = self.current
        try:
            feed_dict = {cur.graph.get_tensor_by_name(n)._as_tf_output(): v for n, v in feeds}
            fetch_list = [cur.graph.get_tensor_by_name(n)._as_tf_output() for n in fetches]
        except (KeyError, ValueError) as e:
            raise invalid(str(e)) from e
        # DirectSession::GetOrCreateExecutors keys its cache by the sorted feed and fetch names
        # (and targets, none here): the first call with a new key builds a new executor.
        key = (tuple(sorted(n for n, _ in feeds)), tuple(sorted(fetches)))
        with self.lock:
            new = key not in cur.seen
        t0 = time.perf_counter()
        try:
            out = cur.session._call_tf_sessionrun(None, feed_dict, fetch_list, [], None)
        except tf.errors.OpError as e:
            raise Status(e.error_code, e.message) from e
        run_ms = (time.perf_counter() - t0) * 1e3
        with self.lock:
            if key not in cur.seen:
                cur.seen.add(key)
                cur.executors.append({"feeds": list(key[0]), "fetches": list(key[1]),
                                      "first_run_ms": round(run_ms, 3)})
        return out, {"new_executor": new, "run_ms": round(run_ms, 3),
                     "feeds": list(key[0]), "fetches": list(key[1])}

    def output_dtype(self, tensor_name):
        return self.current.graph.get_tensor_by_name(tensor_name).dtype.as_datatype_enum


class Registry:
    """The loaded models, by name, and a bounded log of the last requests."""

    def __init__(self):
        self.models = {}
        self.recent = collections.deque(maxlen=200)
        self.lock = threading.Lock()

    def lookup(self, name, version=None):
        m = self.models.get(name)
        if m is None or (version is not None and version != m.version):
            what = "Latest(%s)" % name if version is None else "Specific(%s, %d)" % (name, version)
            raise Status(5, "Servable not found for request: %s" % what)
        return m

    def record(self, entry):
        with self.lock:
            self.recent.append(entry)
        log(entry)


REG = Registry()


# ---------------------------------------------------------------------------------------------
# TF Serving Predict (tensorflow_serving/servables/tensorflow/predict_util.cc)
# ---------------------------------------------------------------------------------------------

def tfs_predict(req, protocol):
    """A TF Serving PredictRequest answered as TF Serving does; raises Status."""
    t0 = time.perf_counter()
    spec = req.model_spec
    version = spec.version.value if spec.HasField("version") else None
    if spec.WhichOneof("version_choice") == "version_label":
        raise invalid("Unrecognized servable version label: %s" % spec.version_label)
    model = REG.lookup(spec.name, version)
    sig_name = spec.signature_name or "serving_default"
    sig = model.signatures.get(sig_name)
    if sig is None:
        raise Status(9, 'Serving signature key "%s" not found.' % sig_name)
    if sig.method_name not in ("tensorflow/serving/predict", "tensorflow/serving/classify",
                               "tensorflow/serving/regress"):
        raise Status(13, "Expected prediction signature method_name to be one of "
                         "{tensorflow/serving/predict, tensorflow/serving/classify, "
                         "tensorflow/serving/regress}. Was: %s" % sig.method_name)
    req_in, sig_in = sorted(req.inputs), sorted(sig.inputs)
    if len(req_in) > len(sig_in) or (len(req_in) < len(sig_in) and not sig.defaults):
        raise invalid(
            "input size does not match signature: %d!=%d len({%s}) != len({%s}). Sent extra: "
            "{%s}. Missing but required: {%s}." % (
                len(req_in), len(sig_in), ",".join(req_in), ",".join(sig_in),
                ",".join(sorted(set(req_in) - set(sig_in))),
                ",".join(sorted(set(sig_in) - set(req_in)))))
    feeds = []
    for alias in req_in:  # tensorflow/cc/saved_model/util.cc GetInputValues
        if alias not in sig.inputs:
            raise invalid("input tensor alias not found in signature: %s. Inputs expected to be "
                          "in the set {%s}." % (alias, ",".join(sig_in)))
        feeds.append((sig.inputs[alias].name, tensor_to_numpy(alias, req.inputs[alias])))
    aliases = []
    for alias in req.output_filter:
        if alias not in sig.outputs:
            raise invalid("output tensor alias not found in signature: %s Outputs expected to be "
                          "in the set {%s}." % (alias, ",".join(sorted(sig.outputs))))
        if alias in aliases:
            raise invalid("duplicate output tensor alias: %s" % alias)
        aliases.append(alias)
    if not aliases:
        aliases = sorted(sig.outputs)
    names = [sig.outputs[a].name for a in aliases]
    entry = {"protocol": protocol, "model": model.name, "signature": sig_name}
    try:
        outs, info = model.run(feeds, names)
    except Status as s:
        entry.update(status=CODE_NAMES.get(s.code), message=s.message,
                     total_ms=round((time.perf_counter() - t0) * 1e3, 3))
        REG.record(entry)
        raise
    resp = predict_pb2.PredictResponse()
    resp.model_spec.name = model.name
    resp.model_spec.version.value = model.version
    resp.model_spec.signature_name = sig_name
    for alias, name, arr in zip(aliases, names, outs):
        resp.outputs[alias].CopyFrom(numpy_to_tensor(np.asarray(arr), model.output_dtype(name)))
    entry.update(info, status="OK", total_ms=round((time.perf_counter() - t0) * 1e3, 3))
    REG.record(entry)
    return resp, info


def signature_def_map(model):
    sdm = get_model_metadata_pb2.SignatureDefMap()
    for key in sorted(model.signatures):
        sdm.signature_def[key].CopyFrom(model.signatures[key])
    return sdm


def tfs_metadata(req):
    """GetModelMetadata (tensorflow_serving/model_servers/get_model_metadata_impl.cc)."""
    if not req.metadata_field:
        raise invalid("GetModelMetadataRequest must specify at least one metadata_field")
    for field in req.metadata_field:
        if field != "signature_def":
            raise invalid("Metadata field %s is not supported" % field)
    spec = req.model_spec
    model = REG.lookup(spec.name, spec.version.value if spec.HasField("version") else None)
    resp = get_model_metadata_pb2.GetModelMetadataResponse()
    resp.model_spec.name = model.name
    resp.model_spec.version.value = model.version
    resp.metadata["signature_def"].Pack(signature_def_map(model))
    return resp, model


class PredictionService(prediction_service_pb2_grpc.PredictionServiceServicer):
    """tensorflow.serving.PredictionService over grpcio: Predict and GetModelMetadata."""

    def Predict(self, request, context):
        try:
            resp, info = tfs_predict(request, "grpc")
        except Status as s:
            context.abort(s.grpc_code(), s.message)
        context.set_trailing_metadata((("x-live-new-executor", str(info["new_executor"]).lower()),
                                       ("x-live-run-ms", str(info["run_ms"]))))
        return resp

    def GetModelMetadata(self, request, context):
        try:
            resp, _ = tfs_metadata(request)
        except Status as s:
            context.abort(s.grpc_code(), s.message)
        log({"protocol": "grpc", "call": "GetModelMetadata", "model": request.model_spec.name})
        return resp


# ---------------------------------------------------------------------------------------------
# TF Serving REST (tensorflow_serving/util/json_tensor.cc, model_servers/http_rest_api_handler.cc)
# ---------------------------------------------------------------------------------------------

def json_type(v):
    if v is None:
        return "Null"
    if v is True:
        return "True"
    if v is False:
        return "False"
    if isinstance(v, dict):
        return "Object"
    if isinstance(v, list):
        return "Array"
    if isinstance(v, str):
        return "String"
    return "Number"


def json_str(v):
    return json.dumps(v, separators=(",", ":"))


def is_b64(v):
    return isinstance(v, dict) and len(v) == 1 and isinstance(v.get("b64"), str)


def add_value(v, enum, tp):
    """AddValueToTensor."""
    def type_error():
        return invalid("JSON Value: %s Type: %s is not of expected type: %s"
                       % (json_str(v), json_type(v), dtype_name(enum)))
    is_num = isinstance(v, (int, float)) and not isinstance(v, bool)
    is_int = isinstance(v, int) and not isinstance(v, bool)
    if enum in (types_pb2.DT_FLOAT, types_pb2.DT_DOUBLE):
        if not is_num:
            raise type_error()
        f = float(v)
        if math.isfinite(f):
            bits = 24 if enum == types_pb2.DT_FLOAT else 53
            big = 3.4028234663852886e38 if enum == types_pb2.DT_FLOAT else sys.float_info.max
            if (is_int and abs(v) > (1 << bits) - 1) or (not is_int and abs(f) > big):
                raise invalid("Cannot convert JSON value: %s to %s without loss of precision."
                              % (json_str(v), "float" if bits == 24 else "double"))
        (tp.float_val if enum == types_pb2.DT_FLOAT else tp.double_val).append(f)
    elif enum in (types_pb2.DT_INT32, types_pb2.DT_INT16, types_pb2.DT_INT8, types_pb2.DT_UINT8):
        if not is_int or not -(1 << 31) <= v < (1 << 31):
            raise type_error()
        tp.int_val.append(v)
    elif enum == types_pb2.DT_STRING:
        if not isinstance(v, str):
            raise type_error()
        tp.string_val.append(v.encode("utf-8"))
    elif enum == types_pb2.DT_INT64:
        if not is_int or not -(1 << 63) <= v < (1 << 63):
            raise type_error()
        tp.int64_val.append(v)
    elif enum == types_pb2.DT_BOOL:
        if not isinstance(v, bool):
            raise type_error()
        tp.bool_val.append(v)
    elif enum == types_pb2.DT_UINT32:
        if not is_int or not 0 <= v < (1 << 32):
            raise type_error()
        tp.uint32_val.append(v)
    elif enum == types_pb2.DT_UINT64:
        if not is_int or not 0 <= v < (1 << 64):
            raise type_error()
        tp.uint64_val.append(v)
    else:
        raise Status(12, "Conversion of JSON Value: %s to type: %s" % (json_str(v), dtype_name(enum)))


def dense_shape(v):
    dims = []
    while isinstance(v, list):
        dims.append(len(v))
        if not v:
            break
        v = v[0]
    return dims


def fill_tensor(v, level, enum, tp, count):
    """FillTensorProto; returns the number of values added."""
    rank = len(tp.tensor_shape.dim)
    if not isinstance(v, list):
        if level != rank:
            raise invalid("JSON Value: %s found at incorrect level: %d in the JSON DOM. Expected at "
                          "level: %d" % (json_str(v), level + 1, rank))
        if isinstance(v, dict):
            if enum != types_pb2.DT_STRING:
                raise invalid("JSON Value: %s Type: Object is not of expected type: %s"
                              % (json_str(v), dtype_name(enum)))
            if not is_b64(v):
                raise invalid("JSON Value: %s not formatted correctly for base64 data" % json_str(v))
            try:
                tp.string_val.append(base64.b64decode(v["b64"], validate=True))
            except ValueError as e:
                raise invalid("Unable to base64 decode") from e
        else:
            add_value(v, enum, tp)
        return count + 1
    if level >= rank:
        raise invalid("Encountered list at unexpected level: %d expected < %d" % (level, rank))
    want = tp.tensor_shape.dim[level].size
    if len(v) != want:
        raise invalid("Encountered list at unexpected size: %d at level: %d expected size: %d"
                      % (len(v), level, want))
    for item in v:
        count = fill_tensor(item, level + 1, enum, tp, count)
    return count


def rest_to_request(name, version, body):
    """FillPredictRequestFromJson: REST JSON -> TF Serving PredictRequest and its format."""
    req = predict_pb2.PredictRequest()
    req.model_spec.name = name
    if version is not None:
        req.model_spec.version.value = version
    if not body:
        raise invalid("JSON Parse error: The document is empty")
    try:
        doc = json.loads(body.decode("utf-8"))  # NaN, Infinity, -Infinity accepted as rapidjson does
    except (ValueError, UnicodeDecodeError) as e:
        raise invalid("JSON Parse error: %s" % e) from e
    if not isinstance(doc, dict):
        raise invalid("JSON Value: %s Is not object" % json_str(doc))
    if "signature_name" in doc:
        if not isinstance(doc["signature_name"], str):
            raise invalid("JSON Value: %s not formatted correctly. 'signature_name' key must be a "
                          "string value." % json_str(doc))
        req.model_spec.signature_name = doc["signature_name"]
    model = REG.lookup(name, version)
    signame = req.model_spec.signature_name or "serving_default"
    sig = model.signatures.get(signame)
    if sig is None:
        raise invalid('Serving signature name: "%s" not found in signature def' % signame)
    info = {k: sig.inputs[k] for k in sorted(sig.inputs)}
    if not info:
        raise invalid("Failed to get input map for signature: %s"
                      % (req.model_spec.signature_name or "DEFAULT"))
    if "instances" in doc and "inputs" in doc:
        raise invalid("JSON Value: %s Not formatted correctly expecting only one of 'inputs' or "
                      "'instances' keys to exist " % json_str(doc))
    if "instances" in doc:
        inst = doc["instances"]
        if not isinstance(inst, list):
            raise invalid("JSON Value: %s Excepting 'instances' to be an list/array" % json_str(doc))
        if not inst:
            raise invalid("JSON Value: %s No values in 'instances' array" % json_str(doc))
        fill_instances(inst, info, req)
        return req, "row"
    if "inputs" in doc:
        fill_inputs(doc["inputs"], info, req)
        return req, "columnar"
    raise invalid("Missing 'inputs' or 'instances' key")


def add_instance_item(item, name, info, sizes, shapes, tensors):
    if name not in info:
        raise invalid("JSON object: does not have named input: %s" % name)
    enum = info[name].dtype
    tp = tensors.setdefault(name, tensor_pb2.TensorProto(dtype=enum))
    del tp.tensor_shape.dim[:]
    for d in dense_shape(item):
        tp.tensor_shape.dim.add().size = d
    size = fill_tensor(item, 0, enum, tp, 0)
    shape = shape_list(tp.tensor_shape)
    if name not in sizes:
        sizes[name], shapes[name] = size, shape
    elif sizes[name] != size:
        raise invalid("Expecting tensor size: %d but got: %d" % (sizes[name], size))
    elif shapes[name] != shape:
        raise invalid("Expecting shape [%s] but got: [%s]" % (
            ",".join(map(str, shapes[name])), ",".join(map(str, shape))))


def fill_instances(inst, info, req):
    if not isinstance(inst[0], dict) and len(info) > 1:
        raise invalid("instances is a plain list, but expecting list of objects as multiple input "
                      "tensors required as per tensorinfo_map")

    def is_obj(v):
        return isinstance(v, dict) and not is_b64(v)

    objects = is_obj(inst[0])
    sizes, shapes, tensors = {}, {}, {}
    for n, elem in enumerate(inst):
        if objects:
            if not is_obj(elem):
                raise invalid("Expecting object but got list at item %d of input list" % n)
            for key, val in elem.items():
                try:
                    add_instance_item(val, key, info, sizes, shapes, tensors)
                except Status as s:
                    raise invalid("Failed to process element: %d key: %s of 'instances' list. "
                                  "Error: %s: %s" % (n, key, CODE_NAMES[s.code], s.message)) from s
            if set(elem) != set(info):
                raise invalid("Failed to process element: %d of 'instances' list. JSON object: %s "
                              "must only have keys: %s" % (n, json_str(elem), ",".join(info)))
        else:
            if is_obj(elem):
                raise invalid("Expecting value/list but got object at item %d of input list" % n)
            name = next(iter(info))
            try:
                add_instance_item(elem, name, info, sizes, shapes, tensors)
            except Status as s:
                raise invalid("Failed to process element: %d of 'instances' list. Error: %s: %s"
                              % (n, CODE_NAMES[s.code], s.message)) from s
    for name, tp in tensors.items():
        tp.dtype = info[name].dtype
        del tp.tensor_shape.dim[:]
        for d in [len(inst)] + shapes[name]:
            tp.tensor_shape.dim.add().size = d
        req.inputs[name].CopyFrom(tp)


def fill_inputs(val, info, req):
    if not isinstance(val, dict) or is_b64(val):
        if len(info) > 1:
            raise invalid("inputs is a plain value/list, but expecting an object as multiple input "
                          "tensors required as per tensorinfo_map")
        items = [(next(iter(info)), val)]
    else:
        items = []
        for name in info:
            if name not in val:
                raise invalid("Missing named input: %s in 'inputs' object." % name)
            items.append((name, val[name]))
    for name, v in items:
        tp = req.inputs[name]
        tp.dtype = info[name].dtype
        for d in dense_shape(v):
            tp.tensor_shape.dim.add().size = d
        fill_tensor(v, 0, tp.dtype, tp, 0)


def write_decimal(x, double):
    """WriteDecimal: shortest %g form that round-trips, '.0' on whole numbers, NaN/Infinity."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "-Infinity" if x < 0 else "Infinity"
    s = "%g" % x
    back = float(s) if double else float(np.float32(float(s)))
    if back != x:
        s = "%.*g" % (17 if double else 9, x)
    if "." not in s and "e" not in s:
        s += ".0"
    return s


def tensor_json_values(tp, name):
    """The values of an output TensorProto (AsProtoField form) as JSON tokens."""
    as_bytes = tp.dtype == types_pb2.DT_STRING and name.endswith("_bytes")
    if tp.dtype == types_pb2.DT_FLOAT:
        return [write_decimal(v, False) for v in tp.float_val]
    if tp.dtype == types_pb2.DT_DOUBLE:
        return [write_decimal(v, True) for v in tp.double_val]
    if tp.dtype in (types_pb2.DT_INT32, types_pb2.DT_INT16, types_pb2.DT_INT8, types_pb2.DT_UINT8):
        return [str(v) for v in tp.int_val]
    if tp.dtype == types_pb2.DT_INT64:
        return [str(v) for v in tp.int64_val]
    if tp.dtype == types_pb2.DT_BOOL:
        return ["true" if v else "false" for v in tp.bool_val]
    if tp.dtype == types_pb2.DT_UINT32:
        return [str(v) for v in tp.uint32_val]
    if tp.dtype == types_pb2.DT_UINT64:
        return [str(v) for v in tp.uint64_val]
    if tp.dtype == types_pb2.DT_STRING:
        if as_bytes:
            return ['{"b64": %s}' % json.dumps(base64.b64encode(v).decode()) for v in tp.string_val]
        return [json.dumps(v.decode("utf-8", "replace"), ensure_ascii=False) for v in tp.string_val]
    raise invalid("Failed to write JSON value for tensor type: %s" % dtype_name(tp.dtype))


def nest(tokens, dims):
    """AddTensorValues: the value tokens as nested JSON arrays of the given dims (a scalar when
    dims is empty)."""
    pos = [0]

    def rec(d):
        if d >= len(dims):
            t = tokens[pos[0]]
            pos[0] += 1
            return t
        return "[" + ", ".join(rec(d + 1) for _ in range(dims[d])) + "]"
    return rec(0)


def rows_of(tokens, dims):
    """The row format's items: one nested value per index of the batch (first) dimension."""
    per = int(np.prod(dims[1:], dtype=np.int64)) if len(dims) > 1 else 1
    return [nest(tokens[i * per:(i + 1) * per], dims[1:]) for i in range(dims[0])]


def response_to_json(outputs, fmt):
    """MakeJsonFromTensors (row: "predictions", columnar: "outputs"), keys in sorted order."""
    if not outputs:
        raise invalid("Cannot convert empty tensor map to JSON")
    names = sorted(outputs)
    if fmt == "row":
        batch = 0
        for n in names:
            dims = shape_list(outputs[n].tensor_shape)
            if not dims:
                raise invalid("Tensor name: %s has no shape information " % n)
            if dims[0] < 1:
                raise invalid("Tensor name: %s has invalid batch size: %d" % (n, dims[0]))
            if batch and batch != dims[0]:
                raise invalid("Tensor name: %s has inconsistent batch size: %d expecting: %d"
                              % (n, dims[0], batch))
            batch = dims[0]
        rows = {n: rows_of(tensor_json_values(outputs[n], n), shape_list(outputs[n].tensor_shape))
                for n in names}
        items = []
        for i in range(batch):
            if len(names) > 1:
                items.append("{" + ", ".join('"%s": %s' % (n, rows[n][i]) for n in names) + "}")
            else:
                items.append(rows[names[0]][i])
        return '{\n    "predictions": [' + ", ".join(items) + "]\n}"
    cols = {n: nest(tensor_json_values(outputs[n], n), shape_list(outputs[n].tensor_shape))
            for n in names}
    if len(names) > 1:
        body = "{" + ", ".join('"%s": %s' % (n, cols[n]) for n in names) + "}"
    else:
        body = cols[names[0]]
    return '{\n    "outputs": ' + body + "\n}"


def metadata_json(model):
    """REST GetModelMetadata, concatenated as http_rest_api_util.cc ToJsonString does (the same
    form as tests/data/models/NAME.metadata.json)."""
    def sort_maps(d):
        # map fields in key order (C++ and pure-Python protobuf print them in insertion order)
        for k, v in list(d.items()):
            if isinstance(v, dict):
                if k in ("signature_def", "inputs", "outputs", "defaults"):
                    d[k] = {kk: sort_maps(v[kk]) for kk in sorted(v)}
                else:
                    sort_maps(v)
        return d

    def to_json(msg):
        return json.dumps(sort_maps(json_format.MessageToDict(
            msg, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)),
            indent=1)
    spec = model_pb2.ModelSpec(name=model.name)
    spec.version.value = model.version
    return ("{\n" + "\"model_spec\":" + to_json(spec) + ",\n" + "\"metadata\": {"
            + "\"signature_def\": " + to_json(signature_def_map(model)) + "}\n" + "}\n")


def model_status_json(model):
    return json.dumps({"model_version_status": [{
        "version": str(model.version), "state": "AVAILABLE",
        "status": {"error_code": "OK", "error_message": ""}}]}, indent=1) + "\n"


PREDICT_RE = re.compile(r"(?i)/v1/models/([^/:]+)(?:/versions/(\d+))?:(classify|regress|predict)")
STATUS_RE = re.compile(r"(?i)/v1/models(?:/([^/:]+))?(?:/versions/(\d+))?(?:/(metadata))?")


def rest_error_body(message):
    """FillJsonErrorMsg: { "error": "<CEscaped message>" }."""
    esc = "".join({"\n": "\\n", "\r": "\\r", "\t": "\\t", "\"": "\\\"", "'": "\\'",
                   "\\": "\\\\"}.get(c, c) if 32 <= ord(c) < 127 or c in "\n\r\t"
                  else "\\%03o" % ord(c) if ord(c) < 128 else c for c in message)
    return '{ "error": "%s" }' % esc


def rest_handle(method, path, body):
    """(HTTP status, JSON text, info) for a /v1/ request."""
    info = None
    try:
        m = PREDICT_RE.fullmatch(path)
        if method == "POST" and m:
            version = int(m.group(2)) if m.group(2) else None
            if m.group(3).lower() != "predict":
                raise Status(12, "%s is not served by this stand-in" % m.group(3))
            req, fmt = rest_to_request(m.group(1), version, body)
            resp, info = tfs_predict(req, "rest")
            return 200, response_to_json(resp.outputs, fmt), info
        m = STATUS_RE.fullmatch(path)
        if method == "GET" and m:
            if not m.group(1):
                raise invalid("Missing model name in request.")
            version = int(m.group(2)) if m.group(2) else None
            model = REG.lookup(m.group(1), version)
            if m.group(3):
                return 200, metadata_json(model), None
            return 200, model_status_json(model), None
        raise invalid("Malformed request: %s %s" % (method, path))
    except Status as s:
        return HTTP_OF_CODE.get(s.code, 500), rest_error_body(s.message), info


# ---------------------------------------------------------------------------------------------
# EAS: tokens, the sync processor, the queue service
# ---------------------------------------------------------------------------------------------

def eas_signature(token, md5, content_type, date, path):
    """The SDK's signature (eas_prediction/predict_client.py generate_singaure)."""
    auth = "POST\n%s\n%s\n%s\n%s" % (md5, content_type, date, path)
    mac = hmac.new(token.encode("utf-8"), auth.strip().encode("utf-8"), hashlib.sha1)
    return "EAS " + base64.b64encode(mac.digest()).decode()


def eas_auth(token, headers, path, body):
    """None when the request may pass, else the 401 message."""
    got = headers.get("Authorization")
    if not got:
        return "Unauthorized: no Authorization header"
    if hmac.compare_digest(got, token):
        return None
    if got.startswith("EAS "):
        md5, date = headers.get("Content-MD5"), headers.get("Date")
        if not md5 or not date:
            return "Unauthorized: an EAS signature needs the Content-MD5 and Date headers"
        if md5 != hashlib.md5(body).hexdigest():
            return "Unauthorized: Content-MD5 does not match the body"
        ctype = headers.get("Content-Type", "")
        want = eas_signature(token, md5, ctype, date, path)
        if hmac.compare_digest(got, want):
            return None
        return "Unauthorized: signature mismatch"
    return "Unauthorized: invalid token"


def eas_predict(model, body, protocol):
    """An EAS PredictRequest run on the model; returns (HTTP status, body bytes, info)."""
    t0 = time.perf_counter()
    req = EAS.PredictRequest()
    try:
        req.ParseFromString(body)
    except Exception as e:  # noqa: BLE001 - DecodeError and friends
        return 400, ("request body is not an EAS PredictRequest: %s" % e).encode(), None
    sig_name = req.signature_name or "serving_default"
    entry = {"protocol": protocol, "model": model.name, "signature": sig_name}
    try:
        sig = model.signatures.get(sig_name)
        if sig is None:
            raise invalid("signature not found: %s (the model has %s)"
                          % (sig_name, ", ".join(sorted(model.signatures))))
        # The request names inputs and outputs by signature alias (the EAS SDK) or by tensor
        # name (DeepRec's processor feeds the keys verbatim, e.g. "input1:0").
        by_name_in = {ti.name: a for a, ti in sig.inputs.items()}
        by_name_out = {ti.name: a for a, ti in sig.outputs.items()}
        feeds = []
        for key in sorted(req.inputs):
            if key in sig.inputs:
                tname = sig.inputs[key].name
            elif key in by_name_in:
                tname = key
            else:
                raise invalid("input %s is not in signature %s (inputs: %s)"
                              % (key, sig_name, ", ".join(sorted(sig.inputs))))
            feeds.append((tname, array_to_numpy(key, req.inputs[key])))
        aliases = []
        for key in req.output_filter:
            alias = key if key in sig.outputs else by_name_out.get(key)
            if alias is None:
                raise invalid("output %s is not in signature %s (outputs: %s)"
                              % (key, sig_name, ", ".join(sorted(sig.outputs))))
            if alias not in aliases:
                aliases.append(alias)
        if not aliases:
            aliases = sorted(sig.outputs)
        names = [sig.outputs[a].name for a in aliases]
        outs, info = model.run(feeds, names)
        resp = EAS.PredictResponse()
        for alias, name, arr in zip(aliases, names, outs):
            resp.outputs[alias].CopyFrom(numpy_to_array(np.asarray(arr), model.output_dtype(name)))
    except Status as s:
        entry.update(status=CODE_NAMES.get(s.code), message=s.message,
                     total_ms=round((time.perf_counter() - t0) * 1e3, 3))
        REG.record(entry)
        return (400 if s.code in (3, 9, 11) else 500), s.message.encode("utf-8"), None
    entry.update(info, status="OK", total_ms=round((time.perf_counter() - t0) * 1e3, 3))
    REG.record(entry)
    return 200, resp.SerializeToString(), info


class Frame:
    __slots__ = ("index", "tags", "data")

    def __init__(self, index, tags, data):
        self.index, self.tags, self.data = index, tags, data


class Queue:
    """One queue of the EAS queue service: items by increasing index (from 1), each with tags."""

    def __init__(self, name, max_length=10000):
        self.name = name
        self.max_length = max_length
        self.items = collections.OrderedDict()
        self.next_index = 1
        self.cond = threading.Condition()

    def put(self, data, tags):
        with self.cond:
            if len(self.items) >= self.max_length:
                raise Status(8, "queue %s is full (%d items)" % (self.name, self.max_length))
            index = self.next_index
            self.next_index += 1
            tags = dict(tags)
            tags.setdefault("requestId", str(uuid.uuid4()))
            self.items[index] = Frame(index, tags, data)
            self.cond.notify_all()
            return index, tags["requestId"]

    def _matching(self, start, length, tags):
        out = []
        for f in self.items.values():
            if f.index >= start and all(f.tags.get(k) == v for k, v in tags.items()):
                out.append(f)
                if len(out) >= length:
                    break
        return out

    def get(self, start, length, timeout_s, auto_delete, tags, stop):
        deadline = time.monotonic() + min(max(timeout_s, 0.0), MAX_WAIT_S)
        with self.cond:
            while True:
                found = self._matching(start, length, tags)
                left = deadline - time.monotonic()
                if found or left <= 0 or stop.is_set():
                    break
                self.cond.wait(min(left, 0.5))
            if auto_delete:
                for f in found:
                    self.items.pop(f.index, None)
            return found

    def remove(self, indexes):
        with self.cond:
            n = sum(1 for i in indexes if self.items.pop(i, None) is not None)
            self.cond.notify_all()
            return n

    def truncate(self, index):
        with self.cond:
            drop = [i for i in self.items if i < index]
            for i in drop:
                del self.items[i]
            self.cond.notify_all()
            return len(drop)

    def attributes(self):
        with self.cond:
            keys = list(self.items)
            return {
                "meta.name": self.name, "meta.backend": "tfreq-live", "meta.state": "Normal",
                "meta.maxPayloadBytes": str(MAX_BODY), "meta.header.user": UID_HEADER,
                "meta.header.group": GID_HEADER, "stream.length": str(len(keys)),
                "stream.approxMaxLength": str(self.max_length),
                "stream.firstEntry": str(keys[0] if keys else 0),
                "stream.lastEntry": str(keys[-1] if keys else self.next_index - 1),
            }

    def take_next(self, after, stop):
        """The worker's read: the oldest item with index > after (waits, bounded by stop)."""
        with self.cond:
            while not stop.is_set():
                for f in self.items.values():
                    if f.index > after:
                        return f
                self.cond.wait(0.5)
            return None


class AsyncService:
    """An EAS asynchronous service: input queue, sink queue, and a worker that runs the model."""

    def __init__(self, model, stop):
        self.name = model.name + ASYNC_SUFFIX
        self.model = model
        self.input = Queue(self.name)
        self.sink = Queue(self.name + SINK_SUFFIX)
        self.stop = stop
        self.thread = threading.Thread(target=self.work, name="worker-" + self.name, daemon=True)

    def work(self):
        last = 0
        while not self.stop.is_set():
            f = self.input.take_next(last, self.stop)
            if f is None:
                return
            last = f.index
            try:
                status, body, _ = eas_predict(self.model, f.data, "queue")
            except Exception as e:  # noqa: BLE001 - the worker must outlive any one item
                status, body = 500, ("%s: %s" % (type(e).__name__, e)).encode()
            tags = {"requestId": f.tags.get("requestId", ""), "source.index": str(f.index),
                    "lastCode": str(status)}
            if status != 200:
                tags["lastMessage"] = body.decode("utf-8", "replace")
            try:
                self.sink.put(body, tags)
            except Status as s:
                log({"protocol": "queue", "error": s.message})
            self.input.remove([f.index])  # committed once its result is on the sink


def parse_go_duration(text):
    """'5s', '0s', '1m30s', '500ms', '2.5s' or a bare number of seconds -> seconds."""
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    total, pos = 0.0, 0
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
    for m in re.finditer(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)", text):
        if m.start() != pos:
            raise ValueError(text)
        total += float(m.group(1)) * units[m.group(2)]
        pos = m.end()
    if pos != len(text) or not text:
        raise ValueError(text)
    return total


# ---------------------------------------------------------------------------------------------
# HTTP front: REST, EAS, queue service, stats
# ---------------------------------------------------------------------------------------------

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "tfreq-live"
    token = DEFAULT_TOKEN
    queues = {}  # path name -> (AsyncService, Queue)
    stop = None

    def setup(self):
        super().setup()
        # Headers and body leave in separate writes: without TCP_NODELAY, Nagle's algorithm holds
        # the body until the client's delayed ACK (~40 ms per request on Linux loopback).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, fmt, *args):  # the request log is ours (one JSON line per call)
        pass

    def reply(self, status, body, ctype="application/octet-stream", headers=()):
        if isinstance(body, str):
            body = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            raise Status(8, "request body of %d bytes exceeds %d" % (n, MAX_BODY))
        return self.rfile.read(n) if n > 0 else b""

    def route(self):
        url = urllib.parse.urlsplit(self.path)
        path = url.path
        try:
            body = self.read_body()
        except Status as s:
            self.close_connection = True
            return self.reply(413, s.message, "text/plain")
        if path.lower().startswith("/v1/"):
            status, text, info = rest_handle(self.command, path, body)
            return self.reply(status, text, "application/json", info_headers(info))
        if path == "/_live/stats" and self.command == "GET":
            return self.reply(200, stats_json(), "application/json")
        if path.startswith("/_live/reload/") and self.command == "POST":
            model = REG.models.get(path[len("/_live/reload/"):])
            if model is None:
                return self.reply(404, "no model %s" % path[len("/_live/reload/"):], "text/plain")
            model.reload()
            log({"event": "reloaded", "model": model.name, "load_ms": round(model.load_ms, 1),
                 "loads": model.loads})
            return self.reply(200, json.dumps({"model": model.name, "loads": model.loads,
                                               "load_ms": round(model.load_ms, 1)}),
                              "application/json")
        if path.startswith("/api/predict/"):
            name = path[len("/api/predict/"):]
            msg = eas_auth(self.token, self.headers, path, body)
            if msg is not None:
                log({"protocol": "eas", "path": path, "status": 401, "message": msg})
                return self.reply(401, msg, "text/plain")
            if name in self.queues:
                return self.queue_call(name, url.query, body)
            if self.command != "POST":
                return self.reply(405, "%s is not allowed on %s" % (self.command, path), "text/plain")
            model = REG.models.get(name)
            if model is None:
                return self.reply(404, "service %s not found" % name, "text/plain")
            status, out, info = eas_predict(model, body, "eas")
            ctype = "application/octet-stream" if status == 200 else "text/plain"
            return self.reply(status, out, ctype, info_headers(info))
        return self.reply(404, "no such endpoint: %s %s" % (self.command, path), "text/plain")

    def queue_call(self, name, query, body):
        service, queue = self.queues[name]
        q = dict(urllib.parse.parse_qsl(query, keep_blank_values=True))
        tags = {k: v for k, v in q.items() if not k.startswith("_")}
        try:
            if self.command == "POST":
                if q.get("_eos_"):
                    return self.reply(200, "OK", "text/plain")
                index, rid = queue.put(body, tags)
                log({"protocol": "queue", "queue": name, "op": "put", "index": index,
                     "requestId": rid, "bytes": len(body)})
                return self.reply(200, str(index), "text/plain", ((REQUEST_ID_HEADER, rid),))
            if self.command == "GET":
                if q.get("_attrs_") == "true":
                    attrs = queue.attributes()
                    if PB_MEDIA in (self.headers.get("Accept") or ""):
                        msg = QPB.AttributesProto()
                        msg.attributes.update(attrs)
                        return self.reply(200, msg.SerializeToString(), PB_MEDIA)
                    return self.reply(200, json.dumps(attrs), "application/json")
                if q.get("_watch_") == "true":
                    return self.watch(queue, q, tags)
                if q.get("_search_") == "true":
                    idx = int(q.get("_index_", "0"))
                    with queue.cond:
                        f = queue.items.get(idx)
                    if f is None:
                        return self.reply(404, "index %d not found in %s" % (idx, name), "text/plain")
                    return self.reply(200, json.dumps({"index": f.index, "tags": f.tags,
                                                       "bytes": len(f.data)}), "application/json")
                start = int(q.get("_index_", "0") or 0)
                length = max(1, min(int(q.get("_length_", "1") or 1), 1000))
                timeout = parse_go_duration(q.get("_timeout_", "0s") or "0s")
                auto_delete = q.get("_auto_delete_", "true") != "false"
                found = queue.get(start, length, timeout, auto_delete, tags, self.stop)
                out = QPB.DataFrameListProto()
                for f in found:
                    df = out.index.add()
                    df.index, df.data = f.index, f.data
                    df.tags.update(f.tags)
                log({"protocol": "queue", "queue": name, "op": "get", "tags": tags,
                     "found": [f.index for f in found], "auto_delete": auto_delete})
                return self.reply(200, out.SerializeToString(), PB_MEDIA)
            if self.command == "DELETE":
                if q.get("_trunc_") == "true":
                    n = queue.truncate(int(q.get("_index_", "0")))
                else:
                    n = queue.remove(parse_indexes(q))
                log({"protocol": "queue", "queue": name, "op": "delete", "removed": n})
                return self.reply(200, "OK", "text/plain")
            if self.command == "PUT":
                n = queue.remove(parse_indexes(q))
                log({"protocol": "queue", "queue": name, "op": "commit", "removed": n})
                return self.reply(200, "OK", "text/plain")
            return self.reply(405, "%s is not allowed on a queue" % self.command, "text/plain")
        except ValueError as e:
            return self.reply(400, "bad query parameter: %s" % e, "text/plain")
        except Status as s:
            return self.reply(HTTP_OF_CODE.get(s.code, 500), s.message, "text/plain")

    def watch(self, queue, q, tags):
        """`?_watch_=true`: a websocket (RFC 6455) on which every item from `_index_` on (0: the
        head) carrying the tags is sent as one binary DataFrameProto frame, at most `_window_`
        uncommitted at a time; `_auto_commit_=true` removes each item once it is sent. Ends when
        the client closes, the connection drops or the server stops."""
        key = self.headers.get("Sec-WebSocket-Key")
        if (self.headers.get("Upgrade") or "").lower() != "websocket" or not key:
            return self.reply(400, "watch needs a websocket upgrade", "text/plain")
        start = int(q.get("_index_", "0") or 0)
        window = max(1, min(int(q.get("_window_", "10") or 10), 1000))
        auto_commit = q.get("_auto_commit_") == "true"
        index_only = q.get("_index_only_") == "true"
        accept = base64.b64encode(hashlib.sha1(
            (key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
        self.send_response(101, "Switching Protocols")
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        log({"protocol": "queue", "queue": queue.name, "op": "watch", "index": start,
             "window": window, "auto_commit": auto_commit, "tags": tags})
        sock = self.connection
        sock.settimeout(0.2)
        sent = []  # indexes sent and not yet committed (without auto-commit)
        after = start - 1
        while not self.stop.is_set():
            try:
                frame = ws_read_frame(sock)
            except TimeoutError:
                frame = None
            except (OSError, ValueError):
                return
            if frame is not None:
                opcode, payload = frame
                if opcode == 0x8:
                    ws_send(sock, 0x8, payload[:2])
                    return
                if opcode == 0x9:
                    ws_send(sock, 0xA, payload)
            with queue.cond:
                sent = [i for i in sent if i in queue.items]
                batch = []
                for f in queue.items.values():
                    if len(sent) + len(batch) >= window:
                        break
                    if f.index > after and all(f.tags.get(k) == v for k, v in tags.items()):
                        batch.append(f)
            for f in batch:
                df = QPB.DataFrameProto(index=f.index)
                df.tags.update(f.tags)
                if not index_only:
                    df.data = f.data
                try:
                    ws_send(sock, 0x2, df.SerializeToString())
                except OSError:
                    return
                after = f.index
                if auto_commit:
                    queue.remove([f.index])
                else:
                    sent.append(f.index)

    do_GET = do_POST = do_PUT = do_DELETE = route


def ws_recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        try:
            chunk = sock.recv(n - len(buf))
        except TimeoutError:
            if not buf:
                raise
            continue  # a frame has begun: finish it
        if not chunk:
            raise OSError("connection closed")
        buf += chunk
    return buf


def ws_read_frame(sock):
    """One client frame (masked, as RFC 6455 requires): (opcode, payload)."""
    b0, b1 = ws_recv_exact(sock, 2)
    n = b1 & 0x7F
    if n == 126:
        n = struct.unpack(">H", ws_recv_exact(sock, 2))[0]
    elif n == 127:
        n = struct.unpack(">Q", ws_recv_exact(sock, 8))[0]
    if n > MAX_BODY:
        raise ValueError("websocket frame of %d bytes" % n)
    mask = ws_recv_exact(sock, 4) if b1 & 0x80 else b"\0\0\0\0"
    data = ws_recv_exact(sock, n) if n else b""
    return b0 & 0x0F, bytes(c ^ mask[i % 4] for i, c in enumerate(data))


def ws_send(sock, opcode, payload):
    """One unmasked, final server frame."""
    n = len(payload)
    if n < 126:
        head = struct.pack(">BB", 0x80 | opcode, n)
    elif n < 1 << 16:
        head = struct.pack(">BBH", 0x80 | opcode, 126, n)
    else:
        head = struct.pack(">BBQ", 0x80 | opcode, 127, n)
    sock.sendall(head + payload)


def parse_indexes(q):
    text = q.get("_indexes_", "")
    return [int(x) for x in text.split(",") if x.strip()]


def info_headers(info):
    if not info:
        return ()
    return (("X-Live-New-Executor", str(info["new_executor"]).lower()),
            ("X-Live-Run-Ms", str(info["run_ms"])))


def stats_json():
    with REG.lock:
        recent = list(REG.recent)
    return json.dumps({
        "models": {n: {"version": m.version, "load_ms": round(m.load_ms, 1), "loads": m.loads,
                       "executors": list(m.current.executors)} for n, m in REG.models.items()},
        "requests": recent}, indent=1)


# ---------------------------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------------------------

def make_tls():
    """A test CA and a certificate it signs for 127.0.0.1 (and localhost), made with the openssl
    command in a temporary directory (removed when the server stops). The CA is separate from the
    server's certificate because rustls refuses a CA certificate used as an end entity."""
    d = tempfile.mkdtemp(prefix="tfreq-live-tls-")
    ca, ca_key = os.path.join(d, "ca.pem"), os.path.join(d, "ca.key")
    cert, key, csr = (os.path.join(d, n) for n in ("server.pem", "server.key", "server.csr"))
    ext = os.path.join(d, "server.ext")
    with open(ext, "w", encoding="utf-8") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=critical,CA:FALSE\n"
                "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    for cmd in (["openssl", "req", "-x509", *ec, "-keyout", ca_key, "-out", ca, "-days", "2",
                 "-subj", "/CN=tfreq live test CA", "-addext",
                 "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"],
                ["openssl", "req", *ec, "-keyout", key, "-out", csr, "-subj", "/CN=127.0.0.1"],
                ["openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key,
                 "-CAcreateserial", "-out", cert, "-days", "2", "-extfile", ext]):
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        except FileNotFoundError:
            sys.exit("server.py: --tls needs the openssl command")
        if p.returncode != 0:
            sys.exit("server.py: %s failed: %s" % (" ".join(cmd[:2]), p.stderr.strip()))
    return {"dir": d, "ca": ca, "cert": cert, "key": key}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", action="append", required=True, metavar="NAME=DIR",
                   help="a SavedModel directory served as NAME (repeatable)")
    p.add_argument("--ready", required=True, help="JSON file written once every port listens")
    p.add_argument("--token", default=os.environ.get("TFREQ_LIVE_TOKEN", DEFAULT_TOKEN),
                   help="the EAS token (default $TFREQ_LIVE_TOKEN or %s)" % DEFAULT_TOKEN)
    p.add_argument("--version", type=int, default=1, help="the version every model is served as")
    p.add_argument("--max-lifetime", type=float, default=600.0,
                   help="seconds after which the server stops by itself (default 600)")
    p.add_argument("--threads", type=int, default=8, help="gRPC worker threads")
    p.add_argument("--tls", action="store_true",
                   help="also serve gRPC and HTTP over TLS (a test CA and a certificate for "
                        "127.0.0.1 made with the openssl command; ports grpcs and https)")
    return p.parse_args(argv)


def main(argv=None):
    global EAS, QPB
    args = parse_args(argv)
    EAS, QPB = compile_protos()
    stop = threading.Event()
    t0 = time.perf_counter()
    for spec in args.model:
        name, sep, path = spec.partition("=")
        if not sep or not name or "/" in name:
            sys.exit("server.py: --model wants NAME=DIR, got %r" % spec)
        REG.models[name] = Model(name, Path(path), args.version)
        log({"event": "loaded", "model": name, "path": path,
             "load_ms": round(REG.models[name].load_ms, 1),
             "signatures": sorted(REG.models[name].signatures)})

    opts = [("grpc.max_receive_message_length", 2**31 - 1),
            ("grpc.max_send_message_length", 2**31 - 1)]
    gsrv = grpc.server(futures.ThreadPoolExecutor(max_workers=args.threads), options=opts)
    prediction_service_pb2_grpc.add_PredictionServiceServicer_to_server(PredictionService(), gsrv)
    gport = gsrv.add_insecure_port("%s:0" % HOST)
    if not gport:
        sys.exit("server.py: could not bind a gRPC port on %s" % HOST)
    tls = make_tls() if args.tls else None
    if tls:
        creds = grpc.ssl_server_credentials([(Path(tls["key"]).read_bytes(),
                                              Path(tls["cert"]).read_bytes())])
        tls["grpcs"] = gsrv.add_secure_port("%s:0" % HOST, creds)
    gsrv.start()

    services = {m.name: AsyncService(m, stop) for m in REG.models.values()}
    queues = {}
    for s in services.values():
        queues[s.input.name] = (s, s.input)
        queues[s.sink.name] = (s, s.sink)
        s.thread.start()
    Handler.token, Handler.queues, Handler.stop = args.token, queues, stop
    hsrv = ThreadingHTTPServer((HOST, 0), Handler)
    hsrv.daemon_threads = True
    hport = hsrv.server_address[1]
    threading.Thread(target=hsrv.serve_forever, kwargs={"poll_interval": 0.2},
                     name="http", daemon=True).start()
    servers = [hsrv]
    if tls:
        ssrv = ThreadingHTTPServer((HOST, 0), Handler)
        ssrv.daemon_threads = True
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(tls["cert"], tls["key"])
        # the handshake happens in the connection's own thread, not in the accept loop
        ssrv.socket = ctx.wrap_socket(ssrv.socket, server_side=True,
                                      do_handshake_on_connect=False)
        tls["https"] = ssrv.server_address[1]
        threading.Thread(target=ssrv.serve_forever, kwargs={"poll_interval": 0.2},
                         name="https", daemon=True).start()
        servers.append(ssrv)

    ready = {"grpc": gport, "http": hport, "host": HOST, "pid": os.getpid(), "token": args.token,
             "models": {n: {"version": m.version, "signatures": sorted(m.signatures)}
                        for n, m in REG.models.items()},
             "async": {n: {"input": s.input.name, "sink": s.sink.name}
                       for n, s in services.items()},
             "max_lifetime_s": args.max_lifetime,
             **({"grpcs": tls["grpcs"], "https": tls["https"], "ca_cert": tls["ca"]} if tls else {}),
             "startup_ms": round((time.perf_counter() - t0) * 1e3, 1)}
    tmp = args.ready + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(ready, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, args.ready)
    log({"event": "ready", "grpc": gport, "http": hport})

    def on_signal(signum, _frame):
        log({"event": "signal", "signal": signum})
        stop.set()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if not stop.wait(args.max_lifetime):
        pass
    reason = "signal" if stop.is_set() else "max lifetime reached"
    stop.set()
    log({"event": "stopping", "reason": reason})
    for srv in servers:
        srv.shutdown()
    gsrv.stop(grace=1.0).wait(5)
    try:
        os.remove(args.ready)
    except OSError:
        pass
    for m in REG.models.values():
        m.current.session.close()
    if tls:
        shutil.rmtree(tls["dir"], ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
