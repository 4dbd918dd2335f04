"""Hand-made wire bytes that protobuf parsers read in surprising ways, with what Python's
pure protobuf 3.20 (the eas-prediction venv) makes of them: text_format.MessageToString
after ParseFromString, or a parse error. cli/tests/interop/text_cases.rs requires tfreq's streaming
text printer to print exactly the same (or to refuse the same bytes).

Python gets our own .proto files as the descriptor set compiled into tfreq, so the
messages are the ones tfreq reads (EAS and TF Serving alike):

    cargo run -q --example descriptor_set | "$(bash .ci/venv eas)" tests/data/gen/make_text_cases.py

Writes tests/data/text_cases/cases.json.
"""
import json
import pathlib
import struct
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, text_format
from google.protobuf.internal import api_implementation
from google.protobuf.message import DecodeError

assert api_implementation.Type() == "python", api_implementation.Type()
OUT = pathlib.Path(__file__).resolve().parents[1] / "text_cases"

fds = descriptor_pb2.FileDescriptorSet.FromString(sys.stdin.buffer.read())
pool = descriptor_pool.DescriptorPool()
for f in fds.file:
    pool.Add(f)
factory = message_factory.MessageFactory(pool)


def cls(name):
    return factory.GetPrototype(pool.FindMessageTypeByName(name))


def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def tag(num, wt):
    return varint(num << 3 | wt)


def v(num, n):  # varint field
    return tag(num, 0) + varint(n)


def ld(num, payload):  # length-delimited field
    return tag(num, 2) + varint(len(payload)) + payload


def f32(num, x):
    return tag(num, 5) + struct.pack("<f", x)


def packed_f32(num, xs):
    return ld(num, b"".join(struct.pack("<f", x) for x in xs))


def group(num, body):
    return tag(num, 3) + body + tag(num, 4)


EAS = "tfreq.eas.PredictRequest"
TFS = "tensorflow.serving.PredictRequest"
TFS_RESP = "tensorflow.serving.PredictResponse"

# EAS ArrayProto: dtype 1, array_shape 2 (dim 1, packed int64), float_val 3, int_val 5, string_val 6, bool_val 8.
eas_x = v(1, 1) + ld(2, ld(1, varint(1) + varint(2))) + packed_f32(3, [1.0, 2.0])
# TF Serving TensorProto: dtype 1, tensor_shape 2 (dim 2: size 1), float_val 5, int_val 7,
# string_val 8, bool_val 11, uint32_val 16.
tfs_dim = lambda n: ld(2, v(1, n))  # noqa: E731

CASES = [
    ("eas_plain", EAS, ld(1, b"serving_default") + ld(2, ld(1, b"x") + ld(2, eas_x)) + ld(3, b"y")),
    # A single bit flip of spec_vector.bin: field 2 (a map) as a varint is an unknown field.
    ("eas_map_as_varint", EAS, bytes.fromhex(
        "0a0f73657276696e675f64656661756c7410170a01781212080112040a0201021a080000803f000000401a0179")),
    ("eas_singular_twice", EAS, ld(1, b"first") + ld(3, b"y") + ld(1, b"second")),
    ("eas_duplicate_key", EAS,
     ld(2, ld(1, b"x") + ld(2, v(1, 1) + packed_f32(3, [1.0]))) +
     ld(2, ld(1, b"x") + ld(2, v(1, 3) + ld(5, varint(7))))),
    ("eas_entry_without_key", EAS, ld(2, ld(2, v(1, 1)))),
    ("eas_entry_without_value", EAS, ld(2, ld(1, b"x"))),
    ("eas_entry_key_last_wins", EAS, ld(2, ld(1, b"a") + ld(2, v(1, 1)) + ld(1, b"b"))),
    ("eas_value_merged", EAS, ld(2, ld(1, b"x") + ld(2, v(1, 1)) + ld(2, packed_f32(3, [4.0])))),
    ("eas_packed_and_unpacked", EAS,
     ld(2, ld(1, b"x") + ld(2, v(1, 1) + f32(3, 1.5) + packed_f32(3, [2.5, -0.0]) + f32(3, 3.5)))),
    ("eas_unknown_dtype_number", EAS, ld(2, ld(1, b"x") + ld(2, v(1, 1234)))),
    ("eas_int_truncation", EAS, ld(2, ld(1, b"x") + ld(2, v(1, 3) + ld(5, varint(1 << 32 | 5) + varint(-1) + varint(0x80000000))))),
    ("eas_bool_two", EAS, ld(2, ld(1, b"x") + ld(2, v(1, 10) + ld(8, varint(2) + varint(0))))),
    ("eas_group_unknown", EAS, ld(1, b"s") + group(9, v(1, 5) + ld(2, b"zz")) + ld(3, b"y")),
    ("eas_group_for_known_field", EAS, ld(1, b"s") + group(2, ld(1, b"x")) + ld(3, b"y")),
    ("eas_wrong_wire_type_string", EAS, v(1, 7) + ld(3, b"y")),
    ("eas_packed_for_string_list", EAS, v(3, 1) + ld(3, b"y")),
    ("eas_fixed_for_packed_int", EAS, ld(2, ld(1, b"x") + ld(2, v(1, 3) + f32(5, 1.0) + v(5, 9)))),
    ("eas_bad_utf8_fetch", EAS, ld(3, b"\xff\xfe")),
    ("eas_bad_utf8_key", EAS, ld(2, ld(1, b"\xc3") + ld(2, v(1, 1)))),
    ("eas_truncated_packed_varint", EAS, ld(2, ld(1, b"x") + ld(2, v(1, 3) + ld(5, b"\x01\x80")))),
    ("eas_packed_float_odd_length", EAS, ld(2, ld(1, b"x") + ld(2, v(1, 1) + ld(3, b"\x00\x00\x80")))),
    ("eas_bytes_escapes", EAS, ld(2, ld(1, b"s") + ld(2, v(1, 7) + ld(6, b"\x00\x01'\"\\\n\x7f\xc3\xa9")))),
    ("tfs_model_spec_merged", TFS, ld(1, ld(1, b"m")) + ld(1, ld(3, b"sig")) + ld(3, b"y")),
    ("tfs_oneof_last_member", TFS, ld(1, ld(1, b"m") + ld(2, v(1, 7)) + ld(4, b"canary"))),
    ("tfs_oneof_back_again", TFS, ld(1, ld(2, v(1, 7)) + ld(4, b"canary") + ld(2, b""))),
    ("tfs_oneof_member_merged", TFS, ld(1, ld(2, v(1, 7)) + ld(2, b""))),
    ("tfs_oneof_zero_version", TFS, ld(1, ld(2, v(1, 0)))),
    ("tfs_empty_label_is_printed", TFS, ld(1, ld(4, b""))),
    ("tfs_optional_client_id_empty", TFS, ld(6, b"") + ld(3, b"y")),
    ("tfs_tensor_fields", TFS,
     ld(2, ld(1, b"x") + ld(2, v(1, 22) + ld(2, tfs_dim(2) + tfs_dim(0)) +
                          ld(16, varint(1 << 32 | 3) + varint(4)) + ld(8, b"a") + ld(8, b"")))),
    ("tfs_tensor_content", TFS, ld(2, ld(1, b"x") + ld(2, v(1, 1) + ld(2, tfs_dim(2)) + ld(4, struct.pack("<2f", 1.0, 2.0))))),
    ("tfs_unknown_inside_tensor", TFS, ld(2, ld(1, b"x") + ld(2, v(1, 1) + v(99, 5) + f32(5, 1.0)))),
    ("tfs_response_outputs", TFS_RESP, ld(1, ld(1, b"b") + ld(2, v(1, 3))) + ld(1, ld(1, b"a") + ld(2, v(1, 1))) + ld(2, ld(1, b"m"))),
]


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    cases = []
    for name, message, data in CASES:
        msg = cls(message)()
        case = {"name": name, "message": message, "hex": data.hex()}
        try:
            msg.ParseFromString(data)
            case["text"] = text_format.MessageToString(msg)
        except (DecodeError, UnicodeDecodeError) as e:
            case["error"] = "%s: %s" % (type(e).__name__, e)
        cases.append(case)
    (OUT / "cases.json").write_text(json.dumps(cases, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print("wrote %d cases (%d errors) to %s" % (len(cases), sum("error" in c for c in cases), OUT / "cases.json"))


main()
