import AdMediation
import Foundation

/// The HTML report's charts, as inline SVG: bars, the latency CDF, the timeline.
extension Reports {
    /// A bar chart, one row per value: the label on a line of its own (shortened in the middle past 60 characters,
    /// the whole name in its tooltip), the bar under it scaled to `maximum`, the value after the bar.
    static func svgBars(
        title: String, values: [(String, Double)], unit: String, maximum: Double, decimals: Int = 1,
        colour: String = colours[0]
    ) -> String {
        let width = 440, rowHeight = 34, barWidth = 340
        let height = rowHeight * values.count + 4
        var svg = ""
        for (index, (label, value)) in values.enumerated() {
            let y = index * rowHeight
            let fraction = maximum > 0 && value.isFinite ? min(1, max(0, value / maximum)) : 0
            let bar = Int((Double(barWidth) * fraction).rounded())
            svg +=
                "<text x=\"1\" y=\"\(y + 13)\" font-size=\"12\"><title>\(escape(label))</title>"
                + "\(escape(shortened(label, to: 60)))</text>"
            svg +=
                "<rect x=\"0\" y=\"\(y + 17)\" width=\"\(barWidth)\" height=\"12\" fill=\"#f0f0f0\"/>"
                + "<rect class=\"mark\" x=\"0\" y=\"\(y + 17)\" width=\"\(bar)\" height=\"12\" fill=\"\(colour)\"/>"
            svg +=
                "<text x=\"\(barWidth + 6)\" y=\"\(y + 28)\" "
                + "font-size=\"11\">\(String(format: "%.\(decimals)f", value))\(escape(unit))</text>"
        }
        return figure(title: title, width: width, height: height, svg)
    }

    /// The latency distribution of every source as a cumulative curve (share of requests answered within x ms), from
    /// the HdrHistogram percentiles 0…100 in steps of 2.5 (and 99, 99.9); the legend under the plot.
    static func svgCDF(sources: [(name: String, tally: Tally)]) -> String {
        let width = 440.0, left = 40.0, top = 8.0, plotHeight = 170.0
        let plotWidth = width - left - 12
        let drawn = sources.enumerated().filter { $0.element.tally.requests > 0 }
        let legendTop = top + plotHeight + 26
        let height = legendTop + Double(drawn.count) * 18 + 4
        let percentiles = stride(from: 0.0, through: 100.0, by: 2.5).map { $0 } + [99.0, 99.9]
        let maxMs = max(0.001, sources.map { $0.tally.percentileMs(100) }.max() ?? 1)
        var svg =
            "<rect x=\"\(Int(left))\" y=\"\(Int(top))\" width=\"\(Int(plotWidth))\" height=\"\(Int(plotHeight))\" "
            + "fill=\"none\" stroke=\"#ccc\"/>"
        let axis = Int(top + plotHeight) + 14
        svg += "<text x=\"\(Int(left))\" y=\"\(axis)\" font-size=\"11\">0 ms</text>"
        // Ticks at a quarter, a half and three quarters of the axis, with their values.
        for quarter in 1...3 {
            let x = left + plotWidth * Double(quarter) / 4
            svg +=
                "<line x1=\"\(Int(x))\" y1=\"\(Int(top))\" x2=\"\(Int(x))\" y2=\"\(Int(top + plotHeight))\" "
                + "stroke=\"#eee\"/><text x=\"\(Int(x))\" y=\"\(axis)\" font-size=\"11\" text-anchor=\"middle\">"
                + "\(String(format: "%.0f", maxMs * Double(quarter) / 4))</text>"
        }
        svg +=
            "<text x=\"\(Int(left + plotWidth))\" y=\"\(axis)\" font-size=\"11\" "
            + "text-anchor=\"end\">\(ms(maxMs)) ms</text>"
        svg +=
            "<text x=\"\(Int(left) - 4)\" y=\"\(Int(top) + 9)\" font-size=\"11\" text-anchor=\"end\">100%</text>"
            + "<text x=\"\(Int(left) - 4)\" y=\"\(Int(top + plotHeight))\" font-size=\"11\" "
            + "text-anchor=\"end\">0%</text>"
        for (row, (index, source)) in drawn.enumerated() {
            let colour = colours[index % colours.count]
            let points = percentiles.sorted().map { p -> String in
                let x = left + plotWidth * min(1, source.tally.percentileMs(p) / maxMs)
                let y = top + plotHeight * (1 - p / 100)
                return String(format: "%.1f,%.1f", x, y)
            }
            svg +=
                "<polyline class=\"mark\" fill=\"none\" stroke=\"\(colour)\" stroke-width=\"2\" "
                + "points=\"\(points.joined(separator: " "))\"/>"
            let y = Int(legendTop) + row * 18
            svg += "<rect x=\"0\" y=\"\(y)\" width=\"12\" height=\"12\" fill=\"\(colour)\"/>"
            svg +=
                "<text x=\"18\" y=\"\(y + 11)\" font-size=\"12\"><title>\(escape(source.name))</title>"
                + "\(escape(shortened(source.name, to: 60)))</text>"
        }
        return figure(
            title: "Latency distribution (share of requests answered within x ms)", label: "Latency distribution",
            width: Int(width), height: Int(height.rounded(.up)), svg)
    }

    /// The waterfall's fill rate over the run, in at most 60 columns of equal length (runs of 2 s or more; a
    /// shorter run says why it has none). With the run's `duration`, the last column is as wide as the part of its
    /// span the run covered (a last partial second is drawn narrow, not as a whole one).
    static func svgTimeline(_ tally: Tally, duration: Double? = nil) -> String {
        guard let last = tally.timeline.keys.max(), last >= 2 else {
            return "<p class=\"timeline\">Fill over time: the run lasted under 2 s, too short for a chart.</p>\n"
        }
        let seconds = last + 1
        let span = (seconds + 59) / 60
        var columns: [(requests: Int, fills: Int)] = Array(repeating: (0, 0), count: (seconds + span - 1) / span)
        for (second, bucket) in tally.timeline {
            let column = min(second / span, columns.count - 1)
            columns[column].requests += bucket.requests
            columns[column].fills += bucket.fills
        }
        let width = 440.0, left = 40.0, top = 8.0, plotHeight = 120.0
        let plotWidth = width - left - 12
        let columnWidth = plotWidth / Double(columns.count)
        var svg =
            "<rect x=\"\(Int(left))\" y=\"\(Int(top))\" width=\"\(Int(plotWidth))\" height=\"\(Int(plotHeight))\" "
            + "fill=\"none\" stroke=\"#ccc\"/>"
        for (index, column) in columns.enumerated() where column.requests > 0 {
            let rate = Double(column.fills) / Double(column.requests)
            let height = plotHeight * rate
            var covered = 1.0
            if index == columns.count - 1, let duration, duration.isFinite {
                covered = min(1, max(0.05, (duration - Double(index * span)) / Double(span)))
            }
            svg += String(
                format: "<rect class=\"mark\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%@\">",
                left + Double(index) * columnWidth, top + plotHeight - height, max(1, columnWidth * 0.8 * covered),
                height, colours[0])
            svg +=
                "<title>\(index * span)–\(index * span + span) s: \(pct(rate)) of \(column.requests)</title></rect>"
        }
        let axis = Int(top + plotHeight) + 14
        svg +=
            "<text x=\"\(Int(left) - 4)\" y=\"\(Int(top) + 9)\" font-size=\"11\" text-anchor=\"end\">100%</text>"
            + "<text x=\"\(Int(left) - 4)\" y=\"\(Int(top + plotHeight))\" font-size=\"11\" "
            + "text-anchor=\"end\">0%</text>"
        svg += "<text x=\"\(Int(left))\" y=\"\(axis)\" font-size=\"11\">0 s</text>"
        svg +=
            "<text x=\"\(Int(left + plotWidth))\" y=\"\(axis)\" font-size=\"11\" "
            + "text-anchor=\"end\">\(seconds) s</text>"
        return figure(
            title: "Waterfall fill rate over time (\(span) s per column, \(seconds) s in all)", label: "Fill over time",
            width: Int(width), height: axis + 6, svg)
    }
}
