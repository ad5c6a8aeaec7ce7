"""The parts cpu-split-padded-convolutions cuts a convolution's output
into, against a brute-force walk over every output's window: the border
bands hold exactly the outputs whose windows meet the padding, and each
band reads the input rows its windows meet, padded by what they overhang."""

import itertools

import pytest

from lamina.passes.cpu_split_padded_convolutions import Window, parts


def brute_reads(window: Window, band):
    """(offset, size, low, high) of the contiguous span of the band's
    windows (the band's convolution indexes it as the whole one does the
    padded input), by enumeration."""
    positions = [o * window.stride + k * window.dilation - window.low
                 for o in range(*band) for k in range(window.kernel)]
    first, last = min(positions), max(positions)
    offset, end = max(first, 0), min(last, window.size - 1)
    return offset, end - offset + 1, offset - first, last - end


CASES = [Window(size, low, kernel, stride, dilation,
                (size + low + high - dilation * (kernel - 1) - 1) // stride + 1)
         for size, kernel, stride, dilation, (low, high) in itertools.product(
             [7, 14, 15, 16, 28, 112], [3, 5, 7], [1, 2], [1, 2], [(1, 1), (3, 3), (0, 2), (2, 1)])
         if low < kernel and high < kernel
         and size + low + high - dilation * (kernel - 1) - 1 >= 0]


@pytest.mark.parametrize("window", CASES, ids=str)
def test_bands_hold_the_outputs_that_meet_the_padding(window):
    before, middle, after = window.bands()
    assert before[0] == 0 and before[1] == middle[0] and middle[1] == after[0]
    assert after[1] == window.out
    for o in range(window.out):
        first = o * window.stride - window.low
        last = first + (window.kernel - 1) * window.dilation
        meets = first < 0 or last >= window.size
        assert meets == (not middle[0] <= o < middle[1]), o
    for band in (before, middle, after):
        if band[0] < band[1]:
            assert window.reads(band) == brute_reads(window, band)


def test_parts_cover_the_output_once():
    rows = Window(28, 1, 3, 1, 1, 28)
    columns = Window(28, 1, 3, 1, 1, 28)
    found = parts(rows, columns, tile_pixels=8)
    covered = [(r, c) for (r0, r1), (c0, c1) in found for r in range(r0, r1)
               for c in range(c0, c1)]
    assert sorted(covered) == [(r, c) for r in range(28) for c in range(28)]
    # The interior: rows 1-26, columns 4-23 (border parts of half a tile,
    # 4 pixels, on either side; 20 columns take 5-pixel tiles).
    assert ((1, 27), (4, 24)) in found
    assert ((1, 27), (0, 4)) in found and ((1, 27), (24, 28)) in found
    # Without a tile: the border columns alone, the 26 between them.
    assert ((1, 27), (1, 27)) in parts(rows, columns)


def test_no_parts_without_padding_or_with_a_large_border():
    assert parts(Window(10, 0, 3, 1, 1, 8), Window(10, 0, 3, 1, 1, 8)) is None
    # Every output of a 2-pixel row padded by 1 meets the padding.
    assert parts(Window(2, 1, 3, 1, 1, 2), Window(2, 1, 3, 1, 1, 2)) is None
    # 3x3 on 7x7: 24 of the 49 outputs meet the padding, too many.
    assert parts(Window(7, 1, 3, 1, 1, 7), Window(7, 1, 3, 1, 1, 7)) is None
    # Stride 2 on 14x14 (7x7 outputs): only the first row and column, 13.
    assert len(parts(Window(14, 1, 3, 2, 1, 7), Window(14, 1, 3, 2, 1, 7), 8)) == 3
