// The arguments of one scenario-recipe directive, read in order. The recipe
// writes them as harness/io/recipe_tokens.py does: one token per value, a list
// as one comma-separated token ("-" when empty). ScenarioRecipe reads every
// directive through this class, and so do the training-job helpers
// (TrainingJobHelper::ApplyDirective), so that every value is checked the
// same way and every error names its recipe line.
#ifndef DDNN_RECIPE_ARGS_H
#define DDNN_RECIPE_ARGS_H

#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace ns3
{

/**
 * \ingroup ddnn
 * \brief One recipe line: its directive and its arguments, read one token at a time.
 *
 * Every read checks its token (a number must be the whole token), so a
 * malformed line stops the build where it is read, naming the line.
 */
class RecipeArgs
{
  public:
    /**
     * \brief Split a recipe line into its directive and arguments.
     * \param line the line (tokens separated by white space)
     * \param lineNo its number in the recipe, for messages
     */
    RecipeArgs(const std::string& line, uint32_t lineNo);

    /// \return the directive: the line's first token
    const std::string& GetDirective() const;
    /// \return whether every argument has been read
    bool AtEnd() const;
    /// \return whether the next argument is an attribute, `Name=Value`
    /// (RecipeComponent reads a TypeId and the attributes after it)
    bool NextIsAttribute() const;

    /**
     * \brief The next argument as a T: a string, a floating-point number, a
     * bool (0 or 1) or an integer (in T's range).
     * \return the value
     */
    template <typename T>
    T Next();
    /**
     * \brief The next argument, a list, as T's.
     * \return the values (empty for "-")
     */
    template <typename T>
    std::vector<T> NextList();
    /**
     * \brief The next argument, a list, as the space-separated string that
     * ns-3 attributes such as PrioQueueDisc's Priomap take.
     * \return the values separated by spaces ("" for "-")
     */
    std::string NextSpaced();
    /**
     * \brief Every argument not read yet (they count as read).
     * \return the tokens
     */
    std::vector<std::string> Rest();

    /**
     * \brief Stop the build: "recipe line N: <what>".
     * \param what the problem
     */
    [[noreturn]] void Fail(const std::string& what) const;
    /// \brief Stop the build: the arguments do not parse ("recipe line N: bad arguments: <line>").
    [[noreturn]] void FailArguments() const;

  private:
    /// The next token; FailArguments() when there is none.
    const std::string& NextToken();
    /// `token` as a double (std::stod: "inf" too, as the recipe's readers always took it).
    double ParseDouble(const std::string& token) const;
    /// `token` as an integer of type T, the whole token.
    template <typename T>
    T ParseInteger(const std::string& token) const;

    std::string m_line;              //!< the whole line, for messages
    uint32_t m_lineNo;               //!< its number in the recipe
    std::string m_directive;         //!< its first token
    std::vector<std::string> m_args; //!< the tokens after it
    size_t m_next = 0;               //!< the next argument to read
};

template <typename T>
T
RecipeArgs::ParseInteger(const std::string& token) const
{
    // char-sized types would be read as characters, not numbers
    static_assert(sizeof(T) > 1 || std::is_same_v<T, bool>, "read a wider integer and narrow it");
    T value{};
    std::istringstream in(token);
    in >> value;
    if (in.fail() || !in.eof())
    {
        FailArguments();
    }
    return value;
}

template <typename T>
T
RecipeArgs::Next()
{
    const std::string& token = NextToken();
    if constexpr (std::is_same_v<T, std::string>)
    {
        return token;
    }
    else if constexpr (std::is_floating_point_v<T>)
    {
        return static_cast<T>(ParseDouble(token));
    }
    else
    {
        return ParseInteger<T>(token);
    }
}

template <typename T>
std::vector<T>
RecipeArgs::NextList()
{
    const std::string& token = NextToken();
    std::vector<T> values;
    if (token == "-")
    {
        return values;
    }
    std::istringstream in(token);
    std::string item;
    while (std::getline(in, item, ','))
    {
        if constexpr (std::is_floating_point_v<T>)
        {
            values.push_back(static_cast<T>(ParseDouble(item)));
        }
        else
        {
            // as wide as the recipe writes, then narrowed (as the lists were always read)
            values.push_back(static_cast<T>(ParseInteger<long long>(item)));
        }
    }
    return values;
}

} // namespace ns3

#endif
