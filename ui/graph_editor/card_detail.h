// SPDX-License-Identifier: Apache-2.0
// Level of detail of the canvas: how much of a node card, edge, block or comment is drawn at a
// zoom, so that no text is drawn too small to read and frames with many items in view stay cheap.
#pragma once

#include <QFont>

namespace kiln::ui {

// Text smaller than this many pixels on screen cannot be read: zoomed further out, cards, edge
// labels, block titles and comments leave it out instead of drawing grey smudges.
inline constexpr qreal kMinLegibleTextPx = 7;

// How much of a node card is drawn at a level of detail (screen pixels per scene unit):
// Full: name, op, output shape, cost, flags and ports, while the card's text is legible;
// Title: the op alone in cardOpFont(), while only that is legible;
// Block: a block in the category colour, no text and no ports; edges become straight lines.
// Each level draws less than the one before it.
enum class CardDetail { Full, Title, Block };
CardDetail cardDetail(qreal levelOfDetail);

// The large bold font of a card at CardDetail::Title (twice the card's text, at least 24 px).
const QFont& cardOpFont();

// Whether text in `font` can be read at a level of detail (kMinLegibleTextPx or more on screen).
bool legibleAt(const QFont& font, qreal levelOfDetail);

}  // namespace kiln::ui
