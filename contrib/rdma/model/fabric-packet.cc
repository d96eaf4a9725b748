#include "fabric-packet.h"

#include <new>

namespace ns3
{

namespace
{

/// Per-thread free list of FabricPacket-sized blocks (memory only; no simulation state).
struct FreeList
{
    void* head = nullptr;

    ~FreeList()
    {
        while (head)
        {
            void* next = *static_cast<void**>(head);
            ::operator delete(head, std::align_val_t(64));
            head = next;
        }
    }
};

thread_local FreeList t_free;

} // namespace

void*
FabricPacket::operator new(std::size_t size)
{
    if (size == sizeof(FabricPacket) && t_free.head)
    {
        void* p = t_free.head;
        t_free.head = *static_cast<void**>(p);
        return p;
    }
    // Cache-line aligned (see the field order); never handed back, only recycled.
    return ::operator new(size, std::align_val_t(64));
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
