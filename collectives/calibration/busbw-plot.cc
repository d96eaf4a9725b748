#include "busbw-plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace fabricsim
{

namespace
{

std::string
Num(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

std::string
SizeLabel(double bytes)
{
    const char* units[] = {"B", "KiB", "MiB", "GiB"};
    int u = 0;
    while (bytes >= 1024 && u < 3)
    {
        bytes /= 1024;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g %s", bytes, units[u]);
    return buf;
}

std::string
Escape(const std::string& s)
{
    std::string out;
    for (char c : s)
    {
        switch (c)
        {
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '&':
            out += "&amp;";
            break;
        case '"':
            out += "&quot;";
            break;
        default:
            out.push_back(c);
        }
    }
    return out;
}

} // namespace

std::string
BusBwPlotSvg(const std::vector<PredictedPoint>& points, const std::string& title)
{
    // Panels keyed by (collective, ranks); within a panel, one curve per size (dtypes pooled).
    std::map<std::pair<std::string, uint32_t>,
             std::map<uint64_t, std::pair<std::vector<double>, std::vector<double>>>>
        panels;
    for (const PredictedPoint& p : points)
    {
        auto& cell = panels[{ToString(p.measured.kind), p.measured.ranks}][p.measured.bytes];
        cell.first.push_back(p.MeasuredBusBw());
        cell.second.push_back(p.PredictedBusBw());
    }
    const int cols = 3;
    const int pw = 330;
    const int ph = 230;
    const int rows = std::max<int>(1, (int(panels.size()) + cols - 1) / cols);
    const int width = cols * pw + 20;
    const int height = rows * ph + 70;
    std::ostringstream o;
    o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"10\" y=\"20\" font-size=\"14\">" << Escape(title) << "</text>\n"
      << "<text x=\"10\" y=\"38\">bus bandwidth (GB/s, 1e9 B) vs message size; dots measured, line "
         "predicted</text>\n";
    int k = 0;
    for (const auto& [key, sizes] : panels)
    {
        const int x0 = 10 + (k % cols) * pw + 45;
        const int y0 = 50 + (k / cols) * ph + 20;
        const int w = pw - 65;
        const int h = ph - 60;
        double maxBw = 1;
        double lo = 1e300;
        double hi = 0;
        for (const auto& [b, v] : sizes)
        {
            lo = std::min(lo, double(b));
            hi = std::max(hi, double(b));
            for (double x : v.first)
            {
                maxBw = std::max(maxBw, x);
            }
            for (double x : v.second)
            {
                maxBw = std::max(maxBw, x);
            }
        }
        maxBw *= 1.1;
        const double l0 = std::log2(lo);
        const double l1 = std::max(l0 + 1, std::log2(hi));
        auto X = [&](double b)
        {
            return x0 + (std::log2(b) - l0) / (l1 - l0) * w;
        };
        auto Y = [&](double bw)
        {
            return y0 + h - bw / maxBw * h;
        };
        o << "<text x=\"" << x0 << "\" y=\"" << y0 - 6 << "\" font-weight=\"bold\">"
          << Escape(key.first) << ", " << key.second << " ranks</text>\n";
        o << "<rect x=\"" << x0 << "\" y=\"" << y0 << "\" width=\"" << w << "\" height=\"" << h
          << "\" fill=\"none\" stroke=\"#888\"/>\n";
        for (int t = 0; t <= 4; ++t)
        {
            const double bw = maxBw * t / 4;
            o << "<text x=\"" << x0 - 4 << "\" y=\"" << Num(Y(bw) + 4) << "\" text-anchor=\"end\">"
              << Num(bw) << "</text>\n";
        }
        o << "<text x=\"" << x0 << "\" y=\"" << y0 + h + 14 << "\">" << SizeLabel(lo) << "</text>\n"
          << "<text x=\"" << x0 + w << "\" y=\"" << y0 + h + 14 << "\" text-anchor=\"end\">"
          << SizeLabel(hi) << "</text>\n";
        std::string line;
        for (const auto& [b, v] : sizes)
        {
            double pred = 0;
            for (double x : v.second)
            {
                pred += x / double(v.second.size());
            }
            line += (line.empty() ? "M" : " L") + Num(X(double(b))) + "," + Num(Y(pred));
            for (double m : v.first)
            {
                o << "<circle cx=\"" << Num(X(double(b))) << "\" cy=\"" << Num(Y(m))
                  << "\" r=\"2.5\" fill=\"#d62728\"/>\n";
            }
        }
        o << "<path d=\"" << line << "\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\"/>\n";
        ++k;
    }
    o << "</svg>\n";
    return o.str();
}

} // namespace fabricsim
