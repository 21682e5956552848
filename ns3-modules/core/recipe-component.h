// One component of a recipe directive, configured the ns-3 way: a TypeId
// and the `Name=Value` attributes the line gives it, e.g.
//
//   ns3::BandQueueDisc MarkThreshold=0,0,20 SetEct=false,false,true
//
// (harness/io/recipe_tokens.py writes them). A recipe token has no spaces, so
// a comma in a value stands for a space: ns-3's own list attributes, such as
// PrioQueueDisc's Priomap, read "1,2,2,..." as "1 2 2 ...". A component that
// makes several objects of its TypeId (the bands of a queue disc) reads a
// value with commas as one value per object instead, the first object's
// first. Every name and value is checked as the line is read, against the
// TypeId's attributes and their checkers, so a bad one stops the build
// naming its recipe line; what a value means together with the others is
// each component's own check (QueueDisc::CheckConfig, and the like).
#ifndef DDNN_RECIPE_COMPONENT_H
#define DDNN_RECIPE_COMPONENT_H

#include "recipe-args.h"

#include "ns3/attribute.h"
#include "ns3/object-factory.h"
#include "ns3/object.h"
#include "ns3/type-id.h"

#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief A TypeId and its attributes, read from a recipe line; applied
 * through ObjectFactory or SetAttribute.
 */
class RecipeComponent
{
  public:
    /**
     * \brief Read the next component of `args`: a TypeId name, then every
     * `Name=Value` argument after it.
     * \param args the line, at the TypeId
     * \param base the TypeId must be `base` or derive from it
     * \param count the objects it configures (values with commas: one each)
     */
    RecipeComponent(RecipeArgs& args, TypeId base, uint32_t count = 1);

    /// \return the component's TypeId
    TypeId GetTypeId() const;
    /// \return how many objects it configures
    uint32_t GetCount() const;
    /**
     * \brief A factory of object `i` with its attributes.
     * \param i which object (0 .. GetCount() - 1)
     * \return the factory
     */
    ObjectFactory GetFactory(uint32_t i = 0) const;
    /**
     * \brief Set object `i`'s attributes on `object`, made by another (a
     * helper such as TrafficControlHelper), before it is initialised.
     * \param object an object of the component's TypeId
     * \param i which object (0 .. GetCount() - 1)
     */
    void Apply(Ptr<Object> object, uint32_t i = 0) const;

  private:
    /// One attribute: a value for every object, or one for all.
    struct Attribute
    {
        std::string name;
        std::vector<Ptr<AttributeValue>> values;
    };

    /// The value of `name` checked against its attribute (a ns-3 list: commas as spaces).
    Ptr<AttributeValue> Check(const RecipeArgs& args,
                              const TypeId::AttributeInformation& info,
                              const std::string& name,
                              std::string text) const;
    /// The value of attribute `a` for object `i`.
    const AttributeValue& ValueOf(const Attribute& a, uint32_t i) const;

    TypeId m_tid;
    uint32_t m_count;
    std::vector<Attribute> m_attributes;
};

} // namespace ns3

#endif
