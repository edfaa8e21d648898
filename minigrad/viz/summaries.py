"""Small, page-sized summaries of arrays: statistics, and heatmaps quantised to one byte a cell.

A heatmap of an array (..., R, C) shows its first few (R, C) slices; a 1-D array is one row. A
slice larger than `max_side` cells a side is shrunk by averaging blocks of cells, so a page holds
the picture of a big tensor in a few kilobytes. Each cell is one byte: 0..254 spread linearly over
[lo, hi], and 255 for a value that is not finite (a masked score of -inf, or NaN), which the page
draws as hatched grey. Arrays with both signs (gradients, mostly) get a range symmetric about 0, so
that 0 is the middle colour.
"""
import base64

import numpy as np

MASKED = 255  # the byte of a cell that holds -inf, inf or NaN


def stats(array):
    """min, max, mean, std and the 2-norm of the finite elements, and counts of the others (JSON-ready)."""
    a = np.asarray(array)
    if a.dtype.kind not in "fiub":
        return None
    a = a.astype(np.float64, copy=False)
    finite = np.isfinite(a)
    values = a[finite]
    summary = {"size": int(a.size), "nan": int(np.isnan(a).sum()), "inf": int(a.size - finite.sum() - np.isnan(a).sum())}
    if values.size:
        summary.update(min=float(values.min()), max=float(values.max()), mean=float(values.mean()),
                       std=float(values.std()), norm=float(np.sqrt(np.sum(values * values))))
    return summary


def heatmap(array, max_side=32, max_slices=8):
    """{rows, cols, slices, labels, lo, hi, data (base64 bytes)} for an array, or None for a 0-d one."""
    a = np.asarray(array)
    if a.ndim == 0 or a.size == 0 or a.dtype.kind not in "fiub":
        return None
    a = a.astype(np.float64, copy=False)
    planes = a.reshape(1, 1, -1) if a.ndim == 1 else a.reshape(-1, *a.shape[-2:])
    leading = a.shape[:-2] if a.ndim > 2 else ()
    n = min(len(planes), max_slices)
    labels = [_slice_label(np.unravel_index(i, leading)) if leading else "" for i in range(n)]
    shrunk = [_shrink(p, max_side) for p in planes[:n]]
    stacked = np.stack(shrunk)
    finite = np.isfinite(stacked)
    values = stacked[finite]
    lo, hi = (float(values.min()), float(values.max())) if values.size else (0.0, 0.0)
    if lo < 0 < hi:  # both signs: symmetric, 0 in the middle
        hi = max(-lo, hi)
        lo = -hi
    span = hi - lo
    scaled = np.zeros(stacked.shape) if span == 0 else (np.where(finite, stacked, lo) - lo) / span
    cells = np.round(scaled * 254).astype(np.uint8)
    cells[~finite] = MASKED
    return {"rows": int(stacked.shape[1]), "cols": int(stacked.shape[2]), "slices": n, "of": int(len(planes)),
            "labels": labels, "lo": lo, "hi": hi, "shape": [int(s) for s in a.shape],
            "shrunk": [int(s) for s in planes.shape[1:]] != [int(s) for s in stacked.shape[1:]],
            "data": base64.b64encode(cells.tobytes()).decode("ascii")}


def _slice_label(index):
    return "[" + ", ".join(str(int(i)) for i in index) + ", :, :]"


def _shrink(plane, max_side):
    """The plane with blocks of cells averaged so that no side exceeds max_side. A block's mean is over
    its finite cells; a block with none (a wholly masked region) stays -inf, so it stays visible."""
    rows, cols = plane.shape
    fr, fc = -(-rows // max_side), -(-cols // max_side)  # block sides: ceil(rows / max_side), ...
    if fr == 1 and fc == 1:
        return plane
    out_r, out_c = -(-rows // fr), -(-cols // fc)
    padded = np.full((out_r * fr, out_c * fc), np.nan)  # NaN: outside the plane, or not finite
    padded[:rows, :cols] = np.where(np.isfinite(plane), plane, np.nan)
    blocks = padded.reshape(out_r, fr, out_c, fc)
    counted = np.sum(~np.isnan(blocks), axis=(1, 3))
    total = np.nansum(blocks, axis=(1, 3))
    return np.divide(total, counted, out=np.full(total.shape, -np.inf), where=counted > 0)
