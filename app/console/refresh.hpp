#pragma once

namespace spillway::console {

// What changed on screen, from least to most work (Wireshark's I/O graph: one timer, three
// levels). Replot: paint again (cursor, crosshair, theme). Recompute: the view's choices over
// the data held (focused instance, visible lanes) — series refilled in place, the zoom kept.
// Reread: new data (a run, a replay, a live snapshot) — refilled in place, the time axis fitted.
// Graphs and items are created only when the shape changes (another series, another band).
enum class Refresh { None, Replot, Recompute, Reread };

}  // namespace spillway::console
