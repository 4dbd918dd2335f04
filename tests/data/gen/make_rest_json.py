#!/usr/bin/env python3
"""Write tests/data/rest/seed_warm_up.json: the TF Serving REST (columnar) form of the
request in the Alibaba "Warm up model services" page's Python example (the one
eas_prediction wrote as tests/data/eas/seed_warm_up.bin):

    sentence1 int32 [200, 15] all 1; sentence2 int32 [200, 15] all 1; y int32 [200, 2] all 2;
    keep_rate float [] 0.2; images float [1, 784] all 1.0; fetches sorted_labels, sorted_probs

REST has no output_filter and no dtypes: give them to `tfreq build` with --fetch and
--dtype. Standard library only:  python3 tests/data/gen/make_rest_json.py
"""
import json
import os

here = os.path.dirname(os.path.abspath(__file__))
doc = {
    "signature_name": "serving_default",
    "inputs": {
        "sentence1": [[1] * 15 for _ in range(200)],
        "sentence2": [[1] * 15 for _ in range(200)],
        "y": [[2] * 2 for _ in range(200)],
        "keep_rate": 0.2,
        "images": [[1.0] * 784],
    },
}
with open(os.path.join(here, "..", "rest", "seed_warm_up.json"), "w") as f:
    json.dump(doc, f, separators=(",", ":"))
    f.write("\n")
