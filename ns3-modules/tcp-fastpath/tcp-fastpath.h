/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * libddnn-tcp: faster definitions of some members of ns-3's TCP buffers,
 * mirroring ns-3.44, that take the place of the wheel's own.
 *
 * Why
 * ---
 * The `ns3` wheel (3.44.post0) is built with NS3_ASSERT on. In its
 * tcp-tx-buffer.cc, GetPacketFromList evaluates, once for every list item it
 * walks, `NS_ASSERT_MSG(list != m_sentList || ...)`: `!=` on two std::lists
 * compares them element by element. Walking the sent list (a retransmission,
 * through CopyFromSequence -> GetTransmittedSegment) to item k of N costs
 * ~(k+1)*N node visits: with the 1,000-1,700 segments in flight of the
 * reference scenario (32 MiB buffers, 1000-packet bands), one retransmission
 * walks ~1.4 M nodes, and 73-76 % of a run's CPU goes there. After that, the
 * scoreboard walks (Update, UpdateLostCount, NextSeg) and the receive buffer's
 * map walks (TcpRxBuffer::Add) are the next costs; each is redefined here to
 * do the same with less work (tcp-tx-buffer-fastpath.h, tcp-rx-buffer-fastpath.h
 * say what each one changes).
 *
 * How
 * ---
 * TcpTxBuffer and TcpRxBuffer have no virtual members and TcpSocketBase's
 * TxBuffer/RxBuffer attributes are read-only, so no subclass can take their
 * place. But libns3.44-internet.so is linked without -Bsymbolic, and
 * TcpSocketBase calls these members through the PLT: a definition in a library
 * that comes before the wheel's libraries in the process's global symbol scope
 * takes their place (loaded after them, it is silently ignored).
 * harness/engine/ns3.py (load) loads this library first; the bench's native
 * main (bench/native/main.cc, built by bench/native.py) links it first (with
 * --no-as-needed). Its linker version script (exports.map) exports only the
 * replaced members and the C entry points below: nothing else it compiled
 * from ns-3's headers can take the place of the wheel's.
 *
 * Same behaviour
 * --------------
 * Each replaced member returns what the 3.44 member returns, calls the same
 * callbacks in the same order and leaves the buffer in the same state. The
 * debug build (DDNN_HARNESS_TCP_CROSSCHECK=1 compiles with DDNN_TCP_CROSSCHECK)
 * runs the wheel's own member beside every call, on a deep copy of the buffer
 * for the members that change it, and stops at the first difference; the tests
 * also compare whole runs with and without this library. What differs: these
 * members write no NS_LOG output, and where 3.44 would dereference a null or
 * end() item (cases a run never reaches: it would crash) they abort with a
 * message or serve the request. The cheap NS_ASSERTs are kept (compiled with
 * NS3_ASSERT_ENABLE, as the wheel is). This code mirrors ns-3.44's internals:
 * the project pins ns3==3.44.post0 (pyproject.toml), harness/engine/ns3.py
 * refuses other versions, and an ns-3.44 build whose TCP buffer headers are
 * not 3.44's (harness/engine/engines.py, FASTPATH_HEADERS).
 */

#ifndef DDNN_TCP_FASTPATH_H
#define DDNN_TCP_FASTPATH_H

#include "ns3/abort.h"
#include "ns3/simulator.h"

#include <dlfcn.h>
#include <string>
#include <vector>

#ifdef DDNN_TCP_CROSSCHECK
#include "ns3/ptr.h"

#include <sstream>
#include <tuple>
#include <type_traits>
#include <utility>
#endif

extern "C"
{
    /**
     * How many of the replaced members the process resolves to this library
     * (dlsym(RTLD_DEFAULT): the lookup order libns3-internet's PLT uses). All
     * of them when the library was loaded before the wheel's libraries.
     * @param total set to the number of replaced members
     * @return the number that resolve here
     */
    int ddnn_tcp_fastpath_in_force(int* total);

    /**
     * @return 1 for the build that cross-checks every call against the wheel, 0 otherwise
     */
    int ddnn_tcp_fastpath_crosscheck(void);

    /**
     * @return calls of replaced members compared with the wheel's so far (debug build)
     */
    unsigned long long ddnn_tcp_fastpath_checked_calls(void);

    /**
     * How often a walk started after what a TcpTxBuffer's hints had settled
     * (tcp-tx-buffer-hints.h), so far (debug build; zeros otherwise).
     * @param uses set to NextSeg's walks after the settled prefix,
     *        UpdateLostCount's stopped at the marked prefix, and SACK blocks
     *        Update walked from an extended block's last segment
     */
    void ddnn_tcp_fastpath_hint_uses(unsigned long long uses[3]);
}

namespace ddnn
{
namespace tcpfastpath
{

/**
 * The mangled names of the members a file pair replaces (each lists its own;
 * exports.map exports the same).
 * @return TcpTxBuffer's replaced members
 */
const std::vector<const char*>& TxBufferMembers();
/** @return TcpRxBuffer's replaced members */
const std::vector<const char*>& RxBufferMembers();

/**
 * @return a handle of libns3-internet (the wheel's), to look its members up in
 */
void* StockLibrary();

/**
 * The wheel's own definition of a replaced member, looked up in
 * libns3-internet itself (whatever the global scope resolves the name to).
 * Members are called as functions taking `this` first (Itanium C++ ABI).
 * @param symbol the member's mangled name
 * @return the wheel's function
 */
template <typename Fn>
Fn
Stock(const char* symbol)
{
    void* fn = dlsym(StockLibrary(), symbol);
    NS_ABORT_MSG_UNLESS(fn, "tcp-fastpath: the wheel has no " << symbol);
    return reinterpret_cast<Fn>(fn);
}

/// The walks that start after a buffer's hints (ddnn_tcp_fastpath_hint_uses).
enum class HintUse
{
    kSettledPrefix = 0,
    kMarkedPrefix = 1,
    kSackedBlock = 2,
};

#ifndef DDNN_TCP_CROSSCHECK
/// Counted in the debug build only.
inline void
CountHintUse(HintUse)
{
}
#endif

#ifdef DDNN_TCP_CROSSCHECK

/// Count one call compared with the wheel's.
void CountCheck();

/**
 * Count one walk that started after a buffer's hints.
 * @param use which
 */
void CountHintUse(HintUse use);

/**
 * Stop the run: a replaced member did not do what the wheel's does.
 * @param member the member
 * @param what what differs
 */
[[noreturn]] void Mismatch(const char* member, const std::string& what);

/**
 * Private members, named the one way C++ lets code outside a class name them:
 * an explicit template instantiation. DDNN_EXPOSE(Tag, Class, member, Type),
 * written in this namespace, makes `object.*Get(Tag{})` that member.
 */
template <typename Tag, typename Tag::type Pointer>
struct Expose
{
    friend typename Tag::type Get(Tag)
    {
        return Pointer;
    }
};

#define DDNN_EXPOSE(TAG, CLASS, MEMBER, TYPE)                                                      \
    struct TAG                                                                                     \
    {                                                                                              \
        using type = TYPE CLASS::*;                                                                \
        friend type Get(TAG);                                                                      \
    };                                                                                             \
    template struct Expose<TAG, &CLASS::MEMBER>

/**
 * Marks a replaced member's own run while it lives. Only the outermost call
 * is compared, as a whole: CopyFromSequence serves a partial request by
 * calling itself, and that call is part of the one being compared.
 */
class Nested
{
  public:
    Nested();
    ~Nested();
    /** @return whether no replaced member is running as the compared one now */
    static bool Outermost();
};

/**
 * What a buffer type's members are compared on; each buffer file
 * specialises it with
 *   static ns3::Ptr<Buffer> Clone(const Buffer&): a deep copy, for the
 *       wheel's member to change instead of the buffer;
 *   static std::string Difference(const Buffer& ours, const Buffer& stock):
 *       how the two buffers' states differ, in words ("" when they agree).
 */
template <typename Buffer>
struct Shadow;

/**
 * Whether a replaced member and the wheel's returned the same, in words (""
 * when they did). By default, equal values; a file specialises it for a
 * result that points into its buffer (CopyFromSequence's segment).
 */
template <typename Result>
struct Outcome
{
    /**
     * @param ours our member's result
     * @param stock the wheel's
     * @return "" or what differs
     */
    template <typename Buffer>
    static std::string Difference(const Result& ours, const Result& stock, const Buffer&, const Buffer&)
    {
        if (ours == stock)
        {
            return "";
        }
        std::ostringstream os;
        os << "returned " << ours << " vs " << stock;
        return os.str();
    }
};

/**
 * How one argument reaches the two members, and what is compared after. By
 * default the same value goes to both and nothing is compared; a file
 * specialises it for a parameter its member answers through (NextSeg's
 * out-parameters, Update's SACK callback).
 */
template <typename Param>
struct Argument
{
    /**
     * @param value the caller's argument
     */
    template <typename Buffer>
    Argument(Param value, Buffer* /* ours */, Buffer* /* stock */)
        : value(value)
    {
    }

    /** @return the argument for the wheel's member */
    Param ForStock() const
    {
        return value;
    }

    /** @return the argument for ours */
    Param ForOurs() const
    {
        return value;
    }

    /** @return "" (nothing comes back through it; a void member passes no result) */
    template <typename... Result>
    std::string Difference(const Result&...) const
    {
        return "";
    }

    Param value; //!< the caller's argument
};

/**
 * Run the wheel's member on `stockBuffer`, then ours on `ourBuffer` (nested,
 * so that its body runs), and stop the run at the first difference: in the
 * result, in what comes back through the arguments and, when the member
 * changes its buffer, in the two buffers.
 * @param member the member's name, for the message
 * @param stock the wheel's member
 * @param ours ours (the member pointer)
 * @param ourBuffer the buffer the caller asked
 * @param stockBuffer the buffer the wheel's member runs on: a copy of it, or
 *        the buffer itself for a member that only reads it
 * @param args the caller's arguments
 * @return ours' result
 */
template <typename Buffer, typename Result, typename... Params, typename Member, typename... Args>
Result
Compare(const char* member,
        Result (*stock)(Buffer*, Params...),
        Member ours,
        Buffer* ourBuffer,
        Buffer* stockBuffer,
        Args&&... args)
{
    std::tuple<Argument<Params>...> arguments(
        Argument<Params>(std::forward<Args>(args), ourBuffer, stockBuffer)...);
    // the wheel's first, then ours, as the caller called the member
    auto runStock = [&] {
        return std::apply([&](auto&... arg) { return stock(stockBuffer, arg.ForStock()...); },
                          arguments);
    };
    auto runOurs = [&] {
        return std::apply(
            [&](auto&... arg) {
                Nested inner;
                return (ourBuffer->*ours)(arg.ForOurs()...);
            },
            arguments);
    };
    std::string difference;
    auto note = [&difference](const std::string& what) {
        if (!what.empty())
        {
            difference += (difference.empty() ? "" : "; ") + what;
        }
    };
    auto compareBuffers = [&] {
        if constexpr (!std::is_const_v<Buffer>)
        {
            note(Shadow<Buffer>::Difference(*ourBuffer, *stockBuffer));
        }
        if (!difference.empty())
        {
            Mismatch(member, difference);
        }
        CountCheck();
    };
    if constexpr (std::is_void_v<Result>)
    {
        runStock();
        runOurs();
        std::apply([&](const auto&... arg) { (note(arg.Difference()), ...); }, arguments);
        compareBuffers();
    }
    else
    {
        const Result expected = runStock();
        const Result got = runOurs();
        note(Outcome<Result>::Difference(got, expected, *ourBuffer, *stockBuffer));
        std::apply([&](const auto&... arg) { (note(arg.Difference(got)), ...); }, arguments);
        compareBuffers();
        return got;
    }
}

/**
 * The cross-check of a member that changes its buffer: the wheel's member
 * runs on a deep copy (Shadow<Buffer>::Clone), and the buffers must agree after.
 * @param member the member's name, for the message
 * @param symbol its mangled name (the wheel's definition is looked up by it)
 * @param ours the member
 * @param self the buffer
 * @param args the arguments
 * @return ours' result
 */
template <typename Buffer, typename Result, typename... Params, typename... Args>
Result
CrossChecked(const char* member,
             const char* symbol,
             Result (Buffer::*ours)(Params...),
             Buffer* self,
             Args&&... args)
{
    ns3::Ptr<Buffer> shadow = Shadow<Buffer>::Clone(*self);
    return Compare(member,
                   Stock<Result (*)(Buffer*, Params...)>(symbol),
                   ours,
                   self,
                   ns3::PeekPointer(shadow),
                   std::forward<Args>(args)...);
}

/**
 * The cross-check of a member that only reads its buffer: the wheel's member
 * runs on the buffer itself.
 * @param member the member's name, for the message
 * @param symbol its mangled name
 * @param ours the member
 * @param self the buffer
 * @param args the arguments
 * @return ours' result
 */
template <typename Buffer, typename Result, typename... Params, typename... Args>
Result
CrossChecked(const char* member,
             const char* symbol,
             Result (Buffer::*ours)(Params...) const,
             const Buffer* self,
             Args&&... args)
{
    return Compare(member,
                   Stock<Result (*)(const Buffer*, Params...)>(symbol),
                   ours,
                   self,
                   self,
                   std::forward<Args>(args)...);
}

#endif // DDNN_TCP_CROSSCHECK

} // namespace tcpfastpath
} // namespace ddnn

/**
 * The first statement of every replaced member: MEMBER of CLASS, called with
 * its parameters `...` in order; its mangled name is the constant kMEMBER of
 * the member's file. In the cross-checking build the outermost call returns
 * from here, after CrossChecked ran the wheel's member and this one (whose
 * body then runs nested) and compared them. In the normal build it is
 * nothing: the member is its body alone.
 */
#ifdef DDNN_TCP_CROSSCHECK
#define DDNN_TCP_CROSSCHECKED(CLASS, MEMBER, ...)                                                  \
    do                                                                                             \
    {                                                                                              \
        if (::ddnn::tcpfastpath::Nested::Outermost())                                              \
        {                                                                                          \
            return ::ddnn::tcpfastpath::CrossChecked(#CLASS "::" #MEMBER,                          \
                                                     k##MEMBER,                                    \
                                                     &CLASS::MEMBER,                               \
                                                     this,                                         \
                                                     __VA_ARGS__);                                 \
        }                                                                                          \
    } while (false)
#else
#define DDNN_TCP_CROSSCHECKED(CLASS, MEMBER, ...)                                                  \
    do                                                                                             \
    {                                                                                              \
    } while (false)
#endif

#endif /* DDNN_TCP_FASTPATH_H */
