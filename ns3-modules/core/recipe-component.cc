#include "recipe-component.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/string.h"

#include <algorithm>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RecipeComponent");

RecipeComponent::RecipeComponent(RecipeArgs& args, TypeId base, uint32_t count)
    : m_count(count)
{
    NS_LOG_FUNCTION(this << base << count);
    const auto name = args.Next<std::string>();
    if (!TypeId::LookupByNameFailSafe(name, &m_tid) ||
        !(m_tid == base || m_tid.IsChildOf(base)))
    {
        args.Fail(name + " is not a TypeId of a " + base.GetName());
    }
    while (args.NextIsAttribute())
    {
        const auto token = args.Next<std::string>();
        const auto eq = token.find('=');
        Attribute attribute{token.substr(0, eq), {}};
        TypeId::AttributeInformation info;
        if (!m_tid.LookupAttributeByName(attribute.name, &info))
        {
            args.Fail(m_tid.GetName() + " has no attribute " + attribute.name);
        }
        const std::string text = token.substr(eq + 1);
        if (m_count > 1 && text.find(',') != std::string::npos)
        {
            // one value per object
            std::istringstream in(text);
            std::string item;
            while (std::getline(in, item, ','))
            {
                attribute.values.push_back(Check(args, info, attribute.name, item));
            }
            if (attribute.values.size() != m_count)
            {
                args.Fail(m_tid.GetName() + "'s " + attribute.name + " has " +
                          std::to_string(attribute.values.size()) + " values for " +
                          std::to_string(m_count) + " objects");
            }
        }
        else
        {
            attribute.values.push_back(Check(args, info, attribute.name, text));
        }
        m_attributes.push_back(attribute);
    }
}

Ptr<AttributeValue>
RecipeComponent::Check(const RecipeArgs& args,
                       const TypeId::AttributeInformation& info,
                       const std::string& name,
                       std::string text) const
{
    NS_LOG_FUNCTION(this << name << text);
    std::replace(text.begin(), text.end(), ',', ' ');
    Ptr<AttributeValue> value = info.checker->CreateValidValue(StringValue(text));
    if (!value)
    {
        args.Fail(m_tid.GetName() + "'s " + name + " cannot be '" + text + "'");
    }
    return value;
}

TypeId
RecipeComponent::GetTypeId() const
{
    NS_LOG_FUNCTION(this);
    return m_tid;
}

uint32_t
RecipeComponent::GetCount() const
{
    NS_LOG_FUNCTION(this);
    return m_count;
}

const AttributeValue&
RecipeComponent::ValueOf(const Attribute& a, uint32_t i) const
{
    NS_LOG_FUNCTION(this << a.name << i);
    NS_ABORT_MSG_IF(i >= m_count, m_tid.GetName() << ": no object " << i << " of " << m_count);
    return *a.values[a.values.size() == 1 ? 0 : i];
}

ObjectFactory
RecipeComponent::GetFactory(uint32_t i) const
{
    NS_LOG_FUNCTION(this << i);
    ObjectFactory factory;
    factory.SetTypeId(m_tid);
    for (const auto& a : m_attributes)
    {
        factory.Set(a.name, ValueOf(a, i));
    }
    return factory;
}

void
RecipeComponent::Apply(Ptr<Object> object, uint32_t i) const
{
    NS_LOG_FUNCTION(this << object << i);
    NS_ABORT_MSG_IF(!object->GetInstanceTypeId().IsChildOf(m_tid) &&
                        object->GetInstanceTypeId() != m_tid,
                    "RecipeComponent: a " << object->GetInstanceTypeId().GetName()
                                          << " is not a " << m_tid.GetName());
    for (const auto& a : m_attributes)
    {
        object->SetAttribute(a.name, ValueOf(a, i));
    }
}

} // namespace ns3
