#include "keyed-event.h"

#include "ns3/abort.h"

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <vector>

namespace ns3
{

namespace
{

/// The pool of keyed events: chunks that double in size (the channels keep one arrival event
/// per link direction, so a 10k-host fabric's take a few chunks), an intrusive free list.
class KeyedEventPool
{
  public:
    void* Take()
    {
        if (!m_free)
        {
            Grow();
        }
        void* p = m_free;
        m_free = *static_cast<void**>(p);
        return p;
    }

    void Give(void* p)
    {
        *static_cast<void**>(p) = m_free;
        m_free = p;
    }

    bool Owns(const void* p) const
    {
        const auto* b = static_cast<const unsigned char*>(p);
        for (const Chunk& c : m_chunks)
        {
            if (b >= c.begin && b < c.end)
            {
                return true;
            }
        }
        return false;
    }

  private:
    struct Chunk
    {
        const unsigned char* begin;
        const unsigned char* end;
    };

    void Grow()
    {
        const std::size_t slots = std::size_t(4096) << std::min<std::size_t>(m_chunks.size(), 12);
        // Slots of max_align_t granules: every event type is aligned to at most that.
        using Slot = std::aligned_storage_t<KeyedEventImpl::kSlotBytes, alignof(std::max_align_t)>;
        auto* chunk = new Slot[slots];
        auto* bytes = reinterpret_cast<unsigned char*>(chunk);
        m_chunks.push_back({bytes, bytes + slots * sizeof(Slot)});
        for (std::size_t i = slots; i-- > 0;)
        {
            Give(&chunk[i]);
        }
    }

    std::vector<Chunk> m_chunks;
    void* m_free = nullptr;
};

/// Never destroyed: events still referenced when static objects are torn down return here.
KeyedEventPool&
Pool()
{
    static auto* pool = new KeyedEventPool;
    return *pool;
}

} // namespace

bool
KeyedEventImpl::IsKeyed(const EventImpl* impl)
{
    return Pool().Owns(impl);
}

void*
KeyedEventImpl::operator new(std::size_t bytes)
{
    NS_ABORT_MSG_IF(bytes > kSlotBytes,
                    "KeyedEventImpl: an event of " << bytes << " bytes, more than a pool slot");
    return Pool().Take();
}

void
KeyedEventImpl::operator delete(void* p)
{
    if (p)
    {
        Pool().Give(p);
    }
}

} // namespace ns3
