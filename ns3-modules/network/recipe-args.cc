#include "recipe-args.h"

#include "ns3/abort.h"

#include <algorithm>

namespace ns3
{

RecipeArgs::RecipeArgs(const std::string& line, uint32_t lineNo)
    : m_line(line),
      m_lineNo(lineNo)
{
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
    return m_directive;
}

bool
RecipeArgs::AtEnd() const
{
    return m_next == m_args.size();
}

const std::string&
RecipeArgs::NextToken()
{
    if (AtEnd())
    {
        FailArguments();
    }
    return m_args[m_next++];
}

double
RecipeArgs::ParseDouble(const std::string& token) const
{
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
    std::vector<std::string> rest(m_args.begin() + m_next, m_args.end());
    m_next = m_args.size();
    return rest;
}

void
RecipeArgs::Fail(const std::string& what) const
{
    NS_FATAL_ERROR("recipe line " << m_lineNo << ": " << what);
}

void
RecipeArgs::FailArguments() const
{
    Fail("bad arguments: " + m_line);
}

} // namespace ns3
