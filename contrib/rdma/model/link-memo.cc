#include "link-memo.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace ns3
{

namespace
{

enum Kind
{
    kSum,
    kMax,
    kLast,
    kSignal,
    kFault
};

uint64_t
Bits(double v)
{
    uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
}

double
FromBits(uint64_t b)
{
    double v;
    std::memcpy(&v, &b, sizeof v);
    return v;
}

} // namespace

MemoProbe::MemoProbe(Time now)
    : m_now(now)
{
}

void
MemoProbe::Block(const std::string& why)
{
    if (m_blocker.empty())
    {
        m_blocker = why;
    }
}

void
MemoProbe::MixDouble(double v)
{
    Mix(Bits(v));
}

void
MemoProbe::MixSignalDouble(double v)
{
    MixSignal(Bits(v));
}

MemoRecord::MemoRecord(Time start)
    : m_mode(Mode::Begin)
    , m_start(start)
{
}

MemoRecord::MemoRecord(Time start, const std::vector<uint64_t>& delta)
    : m_mode(Mode::Apply)
    , m_start(start)
    , m_apply(&delta)
{
}

void
MemoRecord::Overrun()
{
    throw std::logic_error("MemoRecord: more fields visited than recorded");
}

void
MemoRecord::Finish()
{
    if (m_mode != Mode::Begin)
    {
        throw std::logic_error("MemoRecord::Finish: not a span being recorded");
    }
    m_mode = Mode::End;
    m_cursor = 0;
}

uint64_t
MemoRecord::Next()
{
    return Take();
}

void
MemoRecord::Visit(uint64_t& f, int kind)
{
    switch (m_mode)
    {
    case Mode::Begin:
        m_before.push_back(f);
        if (kind == kMax)
        {
            f = 0; // the span's own maximum builds up from here
        }
        return;
    case Mode::End:
    {
        const uint64_t b = Next();
        if (kind == kMax)
        {
            m_delta.push_back(f);
            f = std::max(b, f);
            return;
        }
        if (kind == kLast)
        {
            m_delta.push_back(f);
            return;
        }
        m_delta.push_back(f - b);
        if (f != b && kind == kSignal)
        {
            m_signalled = true;
        }
        return;
    }
    case Mode::Apply:
    {
        const uint64_t d = Next();
        if (kind == kMax)
        {
            f = std::max(f, d);
        }
        else if (kind == kLast)
        {
            f = d;
        }
        else
        {
            f += d;
        }
        return;
    }
    }
}

void
MemoRecord::SumBlock(uint64_t* f, size_t n)
{
    if (m_mode == Mode::Apply)
    {
        if (m_cursor + n > m_apply->size())
        {
            Overrun();
        }
        const uint64_t* d = m_apply->data() + m_cursor;
        for (size_t i = 0; i < n; ++i)
        {
            f[i] += d[i];
        }
        m_cursor += n;
        return;
    }
    for (size_t i = 0; i < n; ++i)
    {
        Visit(f[i], kSum);
    }
}

void
MemoRecord::Sum(uint32_t& f)
{
    uint64_t v = f;
    Visit(v, kSum);
    f = uint32_t(v); // a 32-bit sequence number advances modulo 2^32, as it would have
}

void
MemoRecord::Max(uint64_t& f)
{
    Visit(f, kMax);
}

void
MemoRecord::Last(uint32_t& f)
{
    uint64_t v = f;
    Visit(v, kLast);
    f = uint32_t(v);
}

void
MemoRecord::Last(int64_t& f)
{
    uint64_t v = uint64_t(f);
    Visit(v, kLast);
    f = int64_t(v);
}

void
MemoRecord::Last(double& f)
{
    uint64_t v = Bits(f);
    Visit(v, kLast);
    f = FromBits(v);
}

void
MemoRecord::Last(bool& f)
{
    uint64_t v = f ? 1 : 0;
    Visit(v, kLast);
    f = v != 0;
}

void
MemoRecord::RecordTime(Time& t)
{
    // Two values: whether the span set the time, and then its offset from the span's start.
    if (m_mode == Mode::Begin)
    {
        m_before.push_back(uint64_t(t.GetPicoSeconds()));
        return;
    }
    const uint64_t b = Next();
    const bool set = uint64_t(t.GetPicoSeconds()) != b;
    m_delta.push_back(set ? 1 : 0);
    m_delta.push_back(set ? uint64_t((t - m_start).GetPicoSeconds()) : 0);
}

size_t
MemoRecord::Shape(size_t n, const char* what)
{
    switch (m_mode)
    {
    case Mode::Begin:
        m_before.push_back(n);
        return n;
    case Mode::End:
    {
        const uint64_t b = Next();
        m_delta.push_back(b);
        if (b != n && m_unusable.empty())
        {
            m_unusable = what;
        }
        return std::min<size_t>(n, b);
    }
    case Mode::Apply:
    {
        const uint64_t d = Next();
        if (d != n)
        {
            throw std::logic_error(std::string("MemoRecord: the objects differ from the "
                                               "record's in their ")
                                   + what);
        }
        return n;
    }
    }
    return 0;
}

void
MemoRecord::Unusable(bool cond, const char* what)
{
    if (m_mode == Mode::End && cond && m_unusable.empty())
    {
        m_unusable = what;
    }
}

void
MemoRecord::Signal(uint64_t& f)
{
    Visit(f, kSignal);
}

void
MemoRecord::Fault(uint64_t& f, const char* what)
{
    Visit(f, kFault);
    if (m_mode == Mode::End && m_unusable.empty() && m_delta.back() != 0)
    {
        m_unusable = what;
    }
}

} // namespace ns3
