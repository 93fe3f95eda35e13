"""Geometry: the operation language, poses, views and the perspective camera."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from misi_bench.builder.core.errors import OperationSyntaxError
from misi_bench.builder.operations.language import (
    Move,
    Roll,
    format_operations,
    invert_operations,
    parse_operation,
    parse_operations,
)
from misi_bench.builder.operations.transforms import Pose, apply_operations, apply_view, view_matrix
from misi_bench.builder.scene.camera import Camera, fit_camera

axes = st.sampled_from("xyz")
ops = st.one_of(
    st.builds(Move, axes, st.integers(-100, 100)),
    st.builds(Roll, axes, st.integers(-360, 360)),
)
clouds = st.lists(
    st.tuples(*[st.floats(-30, 30, allow_nan=False)] * 3), min_size=2, max_size=30
).map(np.array)


@given(st.lists(ops, min_size=1, max_size=6))
def test_parse_format_round_trip(seq):
    text = format_operations(seq)
    assert parse_operations(text) == tuple(seq)
    assert format_operations(parse_operations(text)) == text


@settings(max_examples=60)
@given(clouds, st.lists(ops, min_size=1, max_size=5))
def test_operations_then_inverse_is_identity(coords, seq):
    centre = (coords.min(0) + coords.max(0)) / 2
    pose = Pose.identity(centre).then_all(seq).then_all(invert_operations(seq))
    np.testing.assert_allclose(pose.apply(coords), coords, atol=1e-8)


@settings(max_examples=60)
@given(clouds, st.sampled_from("xyz"), st.integers(-180, 180))
def test_roll_keeps_model_centre_and_distances(coords, axis, angle):
    out = apply_operations(coords, [Roll(axis, angle)])
    centre = (coords.min(0) + coords.max(0)) / 2
    np.testing.assert_allclose(
        np.linalg.norm(out - centre, axis=1), np.linalg.norm(coords - centre, axis=1), atol=1e-8
    )
    k = "xyz".index(axis)
    np.testing.assert_allclose(
        out[:, k], coords[:, k], atol=1e-8
    )  # rotation about the axis keeps that coordinate


def test_right_hand_rule_and_views():
    # roll z 90 turns +x into +y (counter-clockwise seen from the viewer)
    out = apply_operations(
        np.array([[1.0, 0, 0], [-1.0, 0, 0]]), [Roll("z", 90)], centre=np.zeros(3)
    )
    np.testing.assert_allclose(out[0], [0, 1, 0], atol=1e-12)
    # the left view shows what a viewer at -x sees: the -x side comes toward the viewer (+z)
    np.testing.assert_allclose(
        apply_view(np.array([[-1.0, 0, 0]]), "left"), [[0, 0, 1]], atol=1e-12
    )
    np.testing.assert_allclose(
        apply_view(np.array([[1.0, 0, 0]]), "right"), [[0, 0, 1]], atol=1e-12
    )
    np.testing.assert_allclose(apply_view(np.array([[0, 1.0, 0]]), "top"), [[0, 0, 1]], atol=1e-12)
    np.testing.assert_allclose(
        apply_view(np.array([[0, -1.0, 0]]), "bottom"), [[0, 0, 1]], atol=1e-12
    )
    np.testing.assert_allclose(
        apply_view(np.array([[0, 0, -1.0]]), "back"), [[0, 0, 1]], atol=1e-12
    )
    for view in ("left", "right", "top", "bottom", "back"):
        m = view_matrix(view)
        assert set(np.abs(m).ravel().tolist()) <= {
            0.0,
            1.0,
        }  # exact permutations, no rounding noise


def test_move_z_enlarges_projection_by_perspective_ratio():
    cam = Camera(distance=80.0)
    pts = np.array([[5.0, 0, 0], [-5.0, 0, 0]])
    width0 = np.ptp(cam.project(pts)[:, 0])
    moved = apply_operations(pts, [Move("z", 40)])
    width1 = np.ptp(cam.project(moved)[:, 0])
    assert width1 / width0 == pytest.approx(80.0 / 40.0)


def test_projection_centre_and_clipping():
    cam = Camera(distance=50.0, size=512)
    uv = cam.project(np.array([[0, 0, 0.0], [0, 0, 60.0], [1.0, 1.0, 0]]))
    assert tuple(uv[0]) == (256.0, 256.0)
    assert np.isnan(uv[1]).all()  # behind the camera
    assert uv[2, 0] > 256 and uv[2, 1] < 256  # +x right, +y up
    assert cam.visible(np.array([[0, 0, 0.0], [0, 0, 60.0]])).tolist() == [True, False]


def test_fit_camera_holds_the_bounding_sphere():
    rng = np.random.default_rng(0)
    pts = rng.normal(size=(200, 3)) * 8
    pts -= (pts.min(0) + pts.max(0)) / 2
    cam = fit_camera(pts)
    for view in ("front", "left", "top", "back"):
        assert cam.visible(apply_view(pts, view)).all()
    with pytest.raises(ValueError):
        fit_camera(np.zeros((0, 3)))


@pytest.mark.parametrize(
    "bad", ["", "move", "move w 3", "roll x 1.5", "Move x 3", "move x 3,", "spin x 4"]
)
def test_strict_parser_rejects(bad):
    with pytest.raises(OperationSyntaxError):
        parse_operations(bad)


def test_magnitudes_must_be_integers():
    with pytest.raises(OperationSyntaxError):
        Move("x", 1.5)
    with pytest.raises(OperationSyntaxError):
        Roll("q", 15)
    assert str(parse_operation("roll y +30")) == "roll y 30"
