#include "recipe-args.h"

#include "ns3/abort.h"
#include "ns3/log.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RecipeArgs");

RecipeArgs::RecipeArgs(const std::string& line, uint32_t lineNo)
    : m_line(line),
      m_lineNo(lineNo)
{
    NS_LOG_FUNCTION(this << line << lineNo);
    std::istringstream in(line);
    in >> m_directive;
    std::string token;
    while (in >> token)
    {
        m_args.push_back(token);
    }
}

const std::string&
RecipeArgs::GetDirective() const
{
    NS_LOG_FUNCTION(this);
    return m_directive;
}

bool
RecipeArgs::AtEnd() const
{
    NS_LOG_FUNCTION(this);
    return m_next == m_args.size();
}

bool
RecipeArgs::NextIsAttribute() const
{
    NS_LOG_FUNCTION(this);
    return !AtEnd() && m_args[m_next].find('=') != std::string::npos;
}

const std::string&
RecipeArgs::NextToken()
{
    NS_LOG_FUNCTION(this);
    if (AtEnd())
    {
        FailArguments();
    }
    return m_args[m_next++];
}

double
RecipeArgs::ParseDouble(const std::string& token) const
{
    NS_LOG_FUNCTION(this << token);
    size_t used = 0;
    double value = 0;
    try
    {
        value = std::stod(token, &used);
    }
    catch (const std::exception&)
    {
        FailArguments();
    }
    if (used != token.size())
    {
        FailArguments();
    }
    return value;
}

std::string
RecipeArgs::NextSpaced()
{
    NS_LOG_FUNCTION(this);
    std::string list = NextToken();
    if (list == "-")
    {
        return "";
    }
    std::replace(list.begin(), list.end(), ',', ' ');
    return list;
}

std::vector<std::string>
RecipeArgs::Rest()
{
    NS_LOG_FUNCTION(this);
    std::vector<std::string> rest(m_args.begin() + m_next, m_args.end());
    m_next = m_args.size();
    return rest;
}

void
RecipeArgs::Fail(const std::string& what) const
{
    NS_LOG_FUNCTION(this << what);
    NS_FATAL_ERROR("recipe line " << m_lineNo << ": " << what);
}

void
RecipeArgs::FailArguments() const
{
    NS_LOG_FUNCTION(this);
    Fail("bad arguments: " + m_line);
}

} // namespace ns3
