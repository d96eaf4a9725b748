#include "fabric-packet.h"

#include <mutex>
#include <new>
#include <vector>

namespace ns3
{

namespace
{

// Frames live in 64-byte aligned 128-byte slots (the first line holds what a switch reads),
// carved from 64 KiB chunks: no allocator header or alignment padding per frame.
static_assert(sizeof(FabricPacket) == 128, "FabricPacket: keep it two cache lines");
constexpr std::size_t kLine = 64;
constexpr std::size_t kChunkSlots = 512;

/// The chunks (never freed: a frame may outlive the thread that made it) and the free slots
/// of threads that have ended, for the next thread to take.
struct Shared
{
    std::mutex mutex;
    std::vector<void*> chunks;
    void* orphans = nullptr;
};

Shared&
Global()
{
    static auto* shared = new Shared; // never destroyed: the chunks stay reachable
    return *shared;
}

/// Per-thread free list of slots (memory only; no simulation state).
struct FreeList
{
    void* head = nullptr;

    ~FreeList()
    {
        if (!head)
        {
            return;
        }
        void* tail = head;
        while (*static_cast<void**>(tail))
        {
            tail = *static_cast<void**>(tail);
        }
        std::lock_guard<std::mutex> lock(Global().mutex);
        *static_cast<void**>(tail) = Global().orphans;
        Global().orphans = head;
    }

    void Refill()
    {
        Shared& g = Global();
        std::lock_guard<std::mutex> lock(g.mutex);
        if (g.orphans)
        {
            head = g.orphans;
            g.orphans = nullptr;
            return;
        }
        auto* chunk = static_cast<unsigned char*>(
            ::operator new(sizeof(FabricPacket) * kChunkSlots, std::align_val_t(kLine)));
        g.chunks.push_back(chunk);
        for (std::size_t i = kChunkSlots; i-- > 0;)
        {
            void* slot = chunk + i * sizeof(FabricPacket);
            *static_cast<void**>(slot) = head;
            head = slot;
        }
    }
};

thread_local FreeList t_free;

} // namespace

void*
FabricPacket::operator new(std::size_t size)
{
    if (size != sizeof(FabricPacket))
    {
        throw std::bad_alloc();
    }
    if (!t_free.head)
    {
        t_free.Refill();
    }
    void* p = t_free.head;
    t_free.head = *static_cast<void**>(p);
    return p;
}

void
FabricPacket::operator delete(void* p) noexcept
{
    if (!p)
    {
        return;
    }
    *static_cast<void**>(p) = t_free.head;
    t_free.head = p;
}

} // namespace ns3
