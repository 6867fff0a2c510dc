"""Categorical CSV columns one-hot encoded as seed 000 §1 does, and the shipped PlayTennis table."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import ROOT, run_cli, runs_of
from sklearn.preprocessing import OneHotEncoder

from lincls.data import column_names, load_csv, load_playtennis
from lincls.errors import LinclsInputError
from lincls.geometry.certificates import separating_direction

SEED_DAYS = [  # seed 000 §1: Outlook, Temp, PlayTennis?
    ("Rainy", 85, "No"),
    ("Sunny", 87, "No"),
    ("Cloudy", 75, "Yes"),
]


def test_playtennis_day_one_is_the_seeds_vector():
    data = load_playtennis()
    names = column_names(data.params["columns"])
    assert names == ["Outlook=Rainy", "Outlook=Sunny", "Outlook=Cloudy", "Temp"]
    assert data.X.shape == (17, 4) and data.X_test.shape == (0, 4)
    # Day 1, Rainy at 85, no tennis: ⟨1, 0, 0, 85⟩, −1 in the logged column order.
    day1 = dict(zip(names, data.X[0], strict=True))
    assert day1 == {"Outlook=Rainy": 1.0, "Outlook=Sunny": 0.0, "Outlook=Cloudy": 0.0, "Temp": 85.0}
    assert data.X[0].tolist() == [1.0, 0.0, 0.0, 85.0] and data.y[0] == "No"
    # Day 3, Cloudy at 75, tennis: ⟨0, 0, 1, 75⟩, +1 (the seed prints day 2, Sunny, with
    # Rainy's ⟨1, 0, 0, ·⟩, a slip: Sunny is its second attribute, ⟨0, 1, 0, 87⟩).
    assert data.X[1].tolist() == [0.0, 1.0, 0.0, 87.0]
    assert data.X[2].tolist() == [0.0, 0.0, 1.0, 75.0] and data.y[2] == "Yes"
    assert data.params["classes"] == ["No", "Yes"]  # string labels kept: "Yes" is the +1 class
    assert data.name == "playtennis"
    assert sorted(set(data.y.tolist())) == ["No", "Yes"] and int((data.y == "Yes").sum()) == 7


def test_playtennis_file_holds_the_seeds_days_first():
    lines = (ROOT / "lincls" / "data" / "playtennis.csv").read_text().splitlines()
    assert lines[0] == "Outlook,Temp,PlayTennis"
    assert [tuple(line.split(",")) for line in lines[1:4]] == [
        (o, str(t), p) for o, t, p in SEED_DAYS
    ]
    assert len(lines) == 1 + 3 + 14


def test_playtennis_is_linearly_separable_with_and_without_a_bias():
    data = load_playtennis()
    y = np.where(data.y == "Yes", 1.0, -1.0)
    for homogeneous in (False, True):  # the one-hot columns sum to 1: a bias in themselves
        direction = separating_direction(data.X, y, homogeneous=homogeneous)
        assert direction is not None
        assert np.all(y * (data.X @ direction[:-1] + direction[-1]) >= 1 - 1e-9)


def test_encoding_equals_scikit_learns_one_hot_encoder(tmp_path):
    path = tmp_path / "t.csv"
    rows = [
        ("b", 1.5, "x", "p"),
        ("a", 2.0, "y", "q"),
        ("c", -3.0, "x", "p"),
        ("a", 0.25, "z", "q"),
    ]
    path.write_text("s,n,t,label\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
    data = load_csv(path)
    s = np.array([[r[0]] for r in rows], dtype=object)
    t = np.array([[r[2]] for r in rows], dtype=object)
    peer = np.hstack(
        [
            OneHotEncoder(categories=[["b", "a", "c"]], sparse_output=False).fit_transform(s),
            np.array([[r[1]] for r in rows]),
            OneHotEncoder(categories=[["x", "y", "z"]], sparse_output=False).fit_transform(t),
        ]
    )
    assert data.X.dtype == np.float64 and data.X.tobytes() == peer.tobytes()
    assert column_names(data.params["columns"]) == ["s=b", "s=a", "s=c", "n", "t=x", "t=y", "t=z"]
    assert data.y.tolist() == ["p", "q", "p", "q"]


def test_numbers_named_categorical_are_one_hot_encoded(tmp_path):
    path = tmp_path / "codes.csv"
    path.write_text("code,v,label\n3,1,0\n1,2,1\n3,3,0\n2,4,1\n")
    plain = load_csv(path)
    assert plain.X.shape == (4, 2)
    coded = load_csv(path, categorical=["code"])
    assert column_names(coded.params["columns"]) == ["code=3", "code=1", "code=2", "v"]
    assert coded.X.tolist() == [[1, 0, 0, 1], [0, 1, 0, 2], [1, 0, 0, 3], [0, 0, 1, 4]]


@pytest.mark.parametrize(
    ("text", "kwargs", "message"),
    [
        (
            "a,b,label\n1,2,1\n3,hot,0\n",
            {},
            "path: {path} line 3, column 'b': 'hot' is not a finite number "
            "(the column's other cells are numbers)",
        ),
        ("a,b,label\nx,2,1\n,3,0\n", {}, "path: {path} line 3, column 'a': the value is missing"),
        (
            "a,b,label\n1,2,1\n",
            {"categorical": ["c"]},
            "categorical: 'c' is not a feature column of {path} (columns: ['a', 'b'])",
        ),
        (
            "a,b,label\n1,2,1\n",
            {"categorical": ["label"]},
            "categorical: 'label' is not a feature column of {path} (columns: ['a', 'b'])",
        ),
    ],
)
def test_bad_categorical_input_is_one_line(tmp_path, text, kwargs, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(LinclsInputError) as info:
        load_csv(path, **kwargs)
    assert str(info.value) == message.format(path=path)


def test_playtennis_runs_end_to_end_through_the_cli(tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    done = run_cli(
        ["dataset=playtennis", "learner=averaged_perceptron", "passes=5", f"tracking.uri={uri}"],
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    (run,) = runs_of(uri)
    assert run.info.status == "FINISHED"
    params = run.data.params
    names = json.loads(params["dataset.columns"])
    assert names == ["Outlook=Rainy", "Outlook=Sunny", "Outlook=Cloudy", "Temp"]
    assert params["dataset.name"] == "playtennis" and "dataset.path" not in params
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    local = client.download_artifacts(run.info.run_id, "dataset/columns.json", str(tmp_path))
    record = json.loads(open(local, encoding="utf-8").read())
    assert record["features"][0] == {"index": 0, "column": "Outlook", "category": "Rainy"}
    assert record["features"][3] == {"index": 3, "column": "Temp"}
    assert record["label_column"] == "PlayTennis" and record["classes"] == ["No", "Yes"]
    m = run.data.metrics
    assert m["separable"] == 1.0 and 0 < m["hyperplane.max_margin"] < 1
    assert m["hyperplane.margin_to_max"] == pytest.approx(
        m["hyperplane.margin"] / m["hyperplane.max_margin"], rel=1e-12
    )
    # the margin histogram is in the run's record (lincls ui serves it as the artifact)
    from lincls.tracking.record import recorded_artifacts

    stored = client.get_run(run.info.run_id).data.tags
    histogram = recorded_artifacts(stored)["hyperplane/margin_histogram.json"]
    assert sum(json.loads(histogram)["counts"]) == 17


def test_an_unknown_categorical_column_is_one_line_exit_2_and_nothing_stored(tmp_path):
    path = tmp_path / "codes.csv"
    path.write_text("code,v,label\n3,1,0\n1,2,1\n")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    done = run_cli(
        [
            "dataset=csv",
            f"dataset.path={path}",
            "dataset.categorical=[nope]",
            f"tracking.uri={uri}",
        ],
        cwd=tmp_path,
    )
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0] == (
        f"error: dataset.categorical: 'nope' is not a feature column of {path} "
        "(columns: ['code', 'v'])"
    )
    assert runs_of(uri) == []
