"""Our PNG writer (builder/scene/png.py): standard PNG files that decode to exactly the pixels
given, read independently of Pillow (chunk CRCs, zlib stream, filter bytes) and by Pillow."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from misi_bench.builder.scene.cache import render_png
from misi_bench.builder.scene.camera import fit_camera
from misi_bench.builder.scene.png import encode_image, encode_rows, png_bytes
from misi_bench.builder.scene.raster import render_image, render_rows
from misi_bench.builder.scene.requests import RenderRequest
from PIL import Image


def _chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """(tag, payload) of every chunk, checking the signature, lengths and CRCs (no Pillow)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    out, pos = [], 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        tag, payload = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(tag + payload), tag
        out.append((tag, payload))
        pos += 12 + length
    assert pos == len(data)
    return out


def _decode_independently(data: bytes) -> np.ndarray:
    """Pixels of one of our PNGs read with zlib and numpy only."""
    chunks = _chunks(data)
    assert [t for t, _ in chunks] == [b"IHDR", b"IDAT", b"IEND"]
    width, height, depth, colour, comp, filt, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    assert (depth, comp, filt, interlace) == (8, 0, 0, 0)
    channels = {0: 1, 2: 3, 6: 4}[colour]
    raw = np.frombuffer(zlib.decompress(chunks[1][1]), dtype=np.uint8)
    rows = raw.reshape(height, 1 + width * channels)
    assert (rows[:, 0] == 0).all()  # filter type 0 on every scanline
    shape = (height, width) if channels == 1 else (height, width, channels)
    return rows[:, 1:].reshape(shape)


@pytest.fixture(scope="module")
def picture(complexes):
    """A real rendered picture: the whole pocket and ligand of 1HVR, front view."""
    cx = complexes["1hvr"]
    request = RenderRequest(atoms=tuple(range(cx.n_atoms)), camera=fit_camera(cx.screen_coords))
    return cx, request, render_image(cx, request)


def test_rendered_picture_round_trips_exactly(picture):
    cx, request, image = picture
    data = render_png(cx, request)
    pixels = np.asarray(image)
    assert np.array_equal(_decode_independently(data), pixels)
    with Image.open(io.BytesIO(data)) as back:
        assert back.format == "PNG" and back.mode == "RGB" and back.size == image.size
        assert np.array_equal(np.asarray(back), pixels)
    assert render_png(cx, request) == data  # deterministic


def test_smaller_than_the_previous_encoder_on_real_pictures(picture):
    """The reason for the writer: fewer bytes than Pillow's PNG at zlib level 1 (builder 0.5)."""
    _, _, image = picture
    pillow = io.BytesIO()
    image.save(pillow, format="PNG", compress_level=1)
    assert len(encode_image(image)) < 0.85 * len(pillow.getvalue())


@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (7, 2, 3), (4, 9, 4), (1, 300, 3)])
def test_grey_rgb_rgba_round_trip(shape):
    pixels = np.random.default_rng(len(shape)).integers(0, 256, shape, dtype=np.uint8)
    data = png_bytes(pixels)
    assert np.array_equal(_decode_independently(data), pixels)
    with Image.open(io.BytesIO(data)) as back:
        assert back.mode == ("L" if len(shape) == 2 else {3: "RGB", 4: "RGBA"}[shape[2]])
        assert np.array_equal(np.asarray(back), pixels)


@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (7, 2, 3), (4, 9, 4), (1, 300, 3), (5, 7, 3)])
def test_pillow_images_encode_to_the_bytes_of_their_pixels(shape):
    """``encode_image`` packs the scanlines with Pillow's raw packer (a stride one byte longer
    than a row): the same bytes as ``png_bytes`` of the pixels, in every mode it takes."""
    pixels = np.random.default_rng(sum(shape)).integers(0, 256, shape, dtype=np.uint8)
    mode = "L" if len(shape) == 2 else {3: "RGB", 4: "RGBA"}[shape[2]]
    image = Image.fromarray(pixels)
    assert image.mode == mode
    assert encode_image(image) == png_bytes(pixels)
    assert np.array_equal(_decode_independently(encode_image(image)), pixels)


def test_rendered_picture_encodes_to_the_bytes_of_its_pixels(picture):
    _, _, image = picture
    assert encode_image(image) == png_bytes(np.asarray(image))


@pytest.mark.parametrize(
    "pixels, message",
    [
        (np.zeros((4, 4, 3), dtype=np.uint16), "uint8"),
        (np.zeros((4, 4, 2), dtype=np.uint8), "pixels"),
        (np.zeros((0, 4, 3), dtype=np.uint8), "non-empty"),
    ],
)
def test_bad_pixels_are_refused_clearly(pixels, message):
    with pytest.raises(ValueError, match=message):
        png_bytes(pixels)


def test_unsupported_pillow_mode_is_refused():
    with pytest.raises(ValueError, match="mode 'P'"):
        encode_image(Image.new("P", (4, 4)))


def test_a_band_of_rows_encodes_to_the_whole_pictures_bytes(picture):
    """``render_png`` encodes the band ``render_rows`` draws (the rows that hold something) with
    the black rest: the bytes of the whole picture, for a band that starts below the top."""
    cx, request, image = picture
    band, top = render_rows(cx, request)
    assert top > 0 and top + band.size[1] < image.size[1]  # black rows above and below
    assert np.array_equal(np.asarray(band), np.asarray(image)[top : top + band.size[1]])
    assert encode_rows(band, top, image.size[1]) == encode_image(image) == render_png(cx, request)
    with pytest.raises(ValueError, match="do not lie"):
        encode_rows(band, image.size[1] - 1, image.size[1])


def test_other_deflate_levels_store_the_same_pixels_in_other_bytes(picture):
    """``level`` (the benchmarks' comparison of deflate levels) changes the compressed stream
    only: the same decoded pixels; the default is ``PNG_DEFLATE_LEVEL``."""
    from misi_bench.builder.scene.png import PNG_DEFLATE_LEVEL

    _, _, image = picture
    pixels = np.asarray(image)
    encoded = {level: encode_image(image, level) for level in (4, 5, 6)}
    assert encode_image(image) == encoded[PNG_DEFLATE_LEVEL]
    assert len(set(encoded.values())) == 3
    for data in encoded.values():
        assert np.array_equal(_decode_independently(data), pixels)
