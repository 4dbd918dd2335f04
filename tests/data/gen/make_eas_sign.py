#!/usr/bin/env python3
"""Records the headers eas-prediction's PredictClient signs a request with, for fixed
inputs, into tests/data/eas_sign/cases.json; cli/tests/net/net.rs holds tfreq's signature to them.

The SDK (eas_prediction/predict_client.py, generate_singaure) takes the date from
datetime.now(); the script fixes it by replacing the module's datetime, so the output is
deterministic. Run with the eas environment:

    "$(bash .ci/venv eas)" tests/data/gen/make_eas_sign.py
"""

import datetime as real_datetime
import json
import os

import eas_prediction.predict_client as pc

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
OUT = os.path.join(REPO, "tests", "data", "eas_sign", "cases.json")

CASES = [
    # (token, service, body file or literal bytes, fixed time)
    ("tfreq-live-token", "faq", "tests/data/eas/faq_prod.bin", (2026, 12, 3, 8, 0, 0)),
    ("tfreq-live-token", "faq", "tests/data/eas/faq_warmup.bin", (2026, 1, 1, 0, 0, 0)),
    ("MjA5NDk0Yjk0ZDNkZGQ3YTdiZjM0NDkwOGQ0ZmZkNTEzOTJmZWI3Mw==", "seed_service",
     "tests/data/eas/seed_warm_up.bin", (2025, 6, 30, 23, 59, 59)),
    ("t", "x", b"", (2000, 2, 29, 12, 34, 56)),
    ("tøken with spaces", "svc-with-dash", b"\x00\x01 body ", (1999, 12, 31, 23, 59, 59)),
]


def main():
    out = []
    for token, service, body, when in CASES:
        if isinstance(body, str):
            with open(os.path.join(REPO, body), "rb") as f:
                data = f.read()
            body_desc = {"file": body}
        else:
            data = body
            body_desc = {"hex": body.hex()}

        class Fixed(real_datetime.datetime):
            @classmethod
            def now(cls, tz=None):
                return real_datetime.datetime(*when)

        class Mod:
            datetime = Fixed

        pc.datetime = Mod
        client = pc.PredictClient("http://127.0.0.1", service)
        client.set_token(token)
        headers = client.generate_singaure(bytearray(data))
        out.append({
            "token": token,
            "service": service,
            "path": "/api/predict/%s" % service,
            "body": body_desc,
            "headers": headers,
        })
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, ensure_ascii=False, sort_keys=True)
        f.write("\n")
    print("wrote", os.path.relpath(OUT, REPO), len(out), "cases")


if __name__ == "__main__":
    main()
