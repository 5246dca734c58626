"""Embeddings beside history (``write``'s ``vectors``, ``embed``, ``similar``), on every backend.

Vectors are keyed by node object and field, so a past commit is searched
with the vectors of the values it held, and a value written again (same
object) needs no new vector.
"""

from __future__ import annotations

import base64
import json
import struct

import pytest
from conftest import run_mnem, store_fingerprint


def vec(*values):
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()


def j(*args, cwd, code=0, input=None):
    result = run_mnem("--json", *args, cwd=cwd, input=input)
    assert result.code == code, result.out + result.err
    return result.json


def put(node_id, content, model="m", **fields):
    return {"id": node_id, "content": content, "vectors": {"model": model, "fields": fields}}


def write(store, *puts):
    return j("write", "-m", "w", cwd=store, input=json.dumps({"put": list(puts)}))["commit"]


def test_nodes_rank_by_their_closest_field_at_any_commit(store):
    first = write(store, put("ns:a", {"t": "x"}, **{"t": vec(1, 0, 0)}),
                  put("ns:b", {"t": "y", "u": "z"}, **{"t": vec(0, 1, 0), "u": vec(0.6, 0.8, 0)}),
                  put("other:c", {"t": "w"}, **{"t": vec(1, 0, 0)}),
                  {"id": "ns:plain", "content": 1})
    found = j("similar", "--model", "m", "--vector", vec(0, 1, 0), cwd=store)
    assert list(found) == ["ns:b", "ns:a", "other:c"]  # best first; ties by id; no vector, no entry
    assert found["ns:b"] == pytest.approx(1.0) and found["ns:a"] == pytest.approx(0.0)
    assert j("similar", "--model", "m", "--vector", vec(1, 0, 0), "--prefix", "ns:", cwd=store) == pytest.approx(
        {"ns:a": 1.0, "ns:b": 0.6})
    assert j("similar", "--model", "other", "--vector", vec(1, 0, 0), cwd=store) == {}

    write(store, put("ns:a", {"t": "changed"}, **{"t": vec(0, 0, 1)}))
    assert j("similar", "--model", "m", "--vector", vec(1, 0, 0), "--node", "ns:a", cwd=store) == {"ns:a": 0.0}
    assert j("similar", first["id"], "--model", "m", "--vector", vec(1, 0, 0), "--node", "ns:a",
             cwd=store) == {"ns:a": 1.0}  # the old value keeps its vector


def test_embed_indexes_values_already_in_memory_without_a_commit(store):
    write(store, {"id": "k1", "content": "one"}, {"id": "k2", "content": "two"})
    commits = len(j("log", cwd=store))
    payload = json.dumps({"k1": {"$": vec(1, 0)}, "k2": {"$": vec(0, 1)}, "absent": {"$": vec(1, 1)}})
    assert j("embed", "--model", "new", cwd=store, input=payload) == {"embedded": 2}
    assert len(j("log", cwd=store)) == commits
    assert list(j("similar", "--model", "new", "--vector", vec(0, 1), cwd=store)) == ["k2", "k1"]


def test_bad_vectors_are_refused_and_change_nothing(store):
    write(store, put("a", 1, t=vec(1, 0)))
    before = store_fingerprint(store)
    for bad in ({"model": "m"}, {"model": "", "fields": {}}, {"model": "m", "fields": {"t": "***"}},
                {"model": "m", "fields": {"t": "AAA="}}, {"model": "m", "fields": {"t": 5}}):
        result = run_mnem("--json", "write", "-m", "bad", cwd=store,
                          input=json.dumps({"put": [{"id": "b", "content": 2, "vectors": bad}]}))
        assert result.code == 2 and result.json["error"]["code"] == "usage", bad
    assert j("embed", "--model", "m", cwd=store, input='{"a": {"t": "nope"}}', code=2)["error"]["code"] == "usage"
    assert j("similar", "--model", "m", "--vector", "nope", cwd=store, code=2)["error"]["code"] == "usage"
    wrong = j("similar", "--model", "m", "--vector", vec(1, 0, 0), cwd=store, code=2)["error"]
    assert wrong["code"] == "usage" and "rebuild" in wrong["message"]
    assert store_fingerprint(store) == before


def test_limit_keeps_the_best_in_the_full_rankings_order(store):
    write(store, *(put(f"n{i}", i, t=vec(1, i % 3)) for i in range(9)))
    full = j("similar", "--model", "m", "--vector", vec(1, 0), cwd=store)
    assert list(full)[:3] == ["n0", "n3", "n6"]  # tied at 1.0: by node id
    for limit in (0, 1, 2, 4, 9, 20):
        assert list(j("similar", "--model", "m", "--vector", vec(1, 0), "--limit", str(limit), cwd=store)) == list(
            full)[:limit]
    assert j("similar", "--model", "m", "--vector", vec(1, 0), "--limit", "-1", cwd=store, code=2)["error"][
        "code"] == "usage"


def test_distance_scores_as_postgresstore_does_on_the_vectors_as_stored(store):
    # Not unit vectors, so the three distances disagree: "far" points the query's way but is long.
    write(store, put("a", "a", t=vec(1, 0)), put("far", "far", t=vec(3, 0.5)), put("side", "side", t=vec(0, 1)),
          put("two", "two", t=vec(0, 1), u=vec(0.8, 0.1)))
    query = vec(1, 0)
    cosine = j("similar", "--model", "m", "--vector", query, cwd=store)
    assert list(cosine) == ["a", "two", "far", "side"] and cosine == j(
        "similar", "--model", "m", "--vector", query, "--distance", "cosine", cwd=store)
    assert cosine["far"] == pytest.approx(3 / 9.25 ** 0.5) and cosine["two"] == pytest.approx(0.8 / 0.65 ** 0.5)
    l2 = j("similar", "--model", "m", "--vector", query, "--distance", "l2", cwd=store)
    assert list(l2) == ["a", "two", "side", "far"]  # minus the Euclidean distance: the nearest first
    assert l2 == pytest.approx({"a": 0.0, "two": -(0.05 ** 0.5), "side": -(2 ** 0.5), "far": -(4.25 ** 0.5)})
    inner = j("similar", "--model", "m", "--vector", query, "--distance", "inner_product", "--limit", "2", cwd=store)
    assert inner == pytest.approx({"far": 3.0, "a": 1.0})  # the plain dot product: length counts
    assert list(inner) == ["far", "a"]
    bad = j("similar", "--model", "m", "--vector", query, "--distance", "dot", cwd=store, code=2)["error"]
    assert bad["code"] == "usage" and "cosine" in bad["message"] and "inner_product" in bad["message"]


@pytest.mark.parametrize(("given", "used"), [(None, "1"), ("3", "3")])
def test_numpy_loads_its_blas_on_one_thread_unless_the_environment_says_otherwise(given, used):
    """A search's scoring does not wait on a BLAS thread pool (``similarity.require_numpy``); a set value stays."""
    import os
    import subprocess
    import sys

    from mnem_store.similarity import BLAS_THREADS

    env = {name: value for name, value in os.environ.items() if name != BLAS_THREADS}
    script = ("import os, sys; from mnem_store.similarity import BLAS_THREADS, require_numpy; "
              "assert 'numpy' not in sys.modules; require_numpy(); assert 'numpy' in sys.modules; "
              "print(os.environ[BLAS_THREADS])")
    found = subprocess.run([sys.executable, "-c", script], env=env if given is None else {**env, BLAS_THREADS: given},
                           capture_output=True, text=True, check=True, timeout=120)
    assert found.stdout.strip() == used
