#!/usr/bin/python3
# validate.py [--invalid] SCHEMA FILE...: each FILE against the JSON Schema
# SCHEMA (draft-07, Debian's python3-jsonschema; test-only). Prints one line
# per invalid file; exit 0 when all are valid (with --invalid: when none
# is), 1 otherwise, 2 on a bad schema.
import json
import sys

import jsonschema

invalid = sys.argv[1] == "--invalid"
if invalid:
    del sys.argv[1]
schema = json.load(open(sys.argv[1]))
try:
    jsonschema.Draft7Validator.check_schema(schema)
except jsonschema.exceptions.SchemaError as e:
    print(f"{sys.argv[1]}: not a valid draft-07 schema: {e.message}")
    sys.exit(2)
v = jsonschema.Draft7Validator(schema)
bad = 0
for path in sys.argv[2:]:
    errors = sorted(v.iter_errors(json.load(open(path))), key=lambda e: list(e.path))
    for e in errors[:1]:
        print(f"{path}: {'/'.join(map(str, e.path)) or '(top)'}: {e.message}")
    if invalid and not errors:
        print(f"{path}: valid")
    bad += bool(errors) != invalid
sys.exit(1 if bad else 0)
