// The @tune attribute: checks its arguments at their source locations and
// expands its configs into a TuneSig (lang/Specialise.h).
#include <functional>
#include <set>

#include "syntax/AST.h"
#include "lang/HostExpr.h"
#include "lang/IRGen.h"
#include "lang/Specialise.h"

namespace tk::lang {

namespace {
// Larger spaces are almost surely a mistake (and would take hours to time).
constexpr size_t kMaxTuneConfigs = 4096;

// grammar: '@' tune '(' configs: [ELEMENT, ...], key: [NAME, ...], prune: EXPR ')'
//          ELEMENT: config(NAME: value, ...) | product(NAME: [value, ...], ...)
// Checks the @tune of a kernel whose signature is sound and expands its
// configs; each error is reported at the name or value it is about.
class TuneChecker {
 public:
  TuneChecker(const ast::Decl &d, DiagnosticEngine &diags, const std::string &file, const FnTable *fns)
      : d_(d), diags_(diags), file_(file), fns_(fns) {}

  std::optional<TuneSig> run(const ast::Attribute &a) {
    int errorsBefore = diags_.errorCount();
    const ast::Expr &call = *a.call;
    const ast::Expr *configs = nullptr, *key = nullptr, *prune = nullptr;
    for (size_t i = 0; i < call.args.size(); ++i) {
      const std::string &n = call.argNames[i];
      const ast::Expr **slot = n == "configs" ? &configs : n == "key" ? &key : n == "prune" ? &prune : nullptr;
      if (n.empty()) error(call.argNameLocs[i], "@tune takes named arguments: configs:, key: and prune:");
      else if (!slot) error(call.argNameLocs[i], "unknown @tune argument " + quoted(n + ":") + " (it takes configs:, key: and prune:)");
      else if (*slot) error(call.argNameLocs[i], quoted(n + ":") + " is given twice");
      else *slot = call.args[i].get();
    }
    TuneSig tune;
    tune.loc = a.loc;
    if (configs) tune.configs = expand(*configs);
    else error(a.loc, "@tune needs configs: [config(...), product(...)]");
    if (key) tune.key = keyNames(*key);
    if (prune) tune.prune = pruneText(*prune, tune.key);
    if (diags_.errorCount() != errorsBefore) return std::nullopt;
    return tune;
  }

 private:
  struct Axis {
    std::string name;
    std::vector<std::string> values;  // canonical text
  };

  void error(const Location &l, const std::string &m) { diags_.error(l, m); }

  const ast::Param *param(const std::string &name) const {
    for (const ast::Param &p : d_.params)
      if (p.name == name) return &p;
    return nullptr;
  }

  // A literal (maybe negated) as define text, checked as -D checks it.
  std::optional<std::string> value(const ast::Expr &v, const std::string &name) {
    const ast::Expr &lit = v.kind == ast::ExprKind::Unary && v.text == "-" ? *v.args[0] : v;
    bool neg = &lit != &v;
    std::optional<std::string> text;
    const ast::Param *p = name == "num_warps" || name == "num_stages" ? nullptr : param(name);
    ConstSort sort = p ? constSortOf(p->type.name) : ConstSort::Scalar;
    if (sort != ConstSort::Scalar) {
      // config(ACT: "gelu"), config(T: f16): checked as -D ACT=gelu, -D T=f16.
      bool fits = sort == ConstSort::Str ? v.kind == ast::ExprKind::String : v.kind == ast::ExprKind::Type;
      if (!fits) {
        error(v.loc, "a @tune value of " + std::string(sort == ConstSort::Str ? "string const " : "type const ") +
                         quoted(name) + " must be " + (sort == ConstSort::Str ? "a string literal" : "a type such as f16"));
        return std::nullopt;
      }
      ConstType t{sort, ir::ScalarKind::I32};
      auto b = parseConstDefine(sort == ConstSort::Str ? v.text : v.type.name, name, t);
      if (!b) return std::nullopt;
      return bindingText(*b);
    }
    if (lit.kind == ast::ExprKind::Int) text = (neg ? "-" : "") + std::to_string(lit.intValue);
    else if (lit.kind == ast::ExprKind::Float) text = HostValue::ofFloat(neg ? -lit.floatValue : lit.floatValue).str();
    else if (lit.kind == ast::ExprKind::Bool && !neg) text = lit.intValue ? "true" : "false";
    if (!text) {
      error(v.loc, "a @tune value must be a literal (a number, true or false), or a string or a type for a str or type const");
      return std::nullopt;
    }
    if (name == "num_warps" || name == "num_stages") {
      auto n = parseDefine(*text, ir::ScalarKind::I32);
      bool ok = n && (name == "num_warps" ? validNumWarps(n->i) : n->i >= 1);
      if (!ok) error(v.loc, name == "num_warps" ? badNumWarps(*text) : badNumStages(*text));
      return ok ? std::optional<std::string>(std::to_string(n->i)) : std::nullopt;
    }
    // A const of a type const's type (`const EPS: T`) is checked for each
    // config when it is specialised; here as the widest of its kind.
    auto declared = IRGen::scalarKind(p->type.name);
    ir::ScalarKind kind = declared ? *declared : lit.kind == ast::ExprKind::Float ? ir::ScalarKind::F64 : ir::ScalarKind::I64;
    auto c = parseDefine(*text, kind);
    if (!c) {
      error(v.loc, invalidValue(*text, name, kind));
      return std::nullopt;
    }
    return constText(*c, kind);
  }

  // The axes of one config(...) (one value each) or product(...).
  bool axes(const ast::Expr &el, std::vector<Axis> &out) {
    bool product = el.text == "product", ok = true;
    std::set<std::string> seen;
    for (size_t i = 0; i < el.args.size(); ++i) {
      const std::string &name = el.argNames[i];
      const ast::Expr &arg = *el.args[i];
      const ast::Param *p = param(name);
      bool known = (p && p->isConst) || name == "num_warps" || name == "num_stages";
      if (name.empty()) {
        error(arg.loc, el.text + (product ? "() takes NAME: [value, ...] arguments" : "() takes NAME: value arguments"));
      } else if (!known) {
        error(el.argNameLocs[i], quoted(name) + " is not a const parameter of kernel " + quoted(d_.name) +
                                     ", num_warps or num_stages");
      } else if (!seen.insert(name).second) {
        error(el.argNameLocs[i], quoted(name) + " is set twice in this " + el.text + "()");
      } else if (product && arg.kind != ast::ExprKind::List) {
        error(arg.loc, "product() takes a list of values for " + quoted(name) + ", as in " + name + ": [64, 128]");
      } else if (product && arg.args.empty()) {
        error(arg.loc, "product() has no values for " + quoted(name));
      } else {
        std::vector<const ast::Expr *> values;
        for (const ast::ExprPtr &v : arg.args) values.push_back(v.get());
        if (!product) values = {&arg};
        Axis axis{name, {}};
        for (const ast::Expr *v : values) {
          auto text = value(*v, name);
          bool repeated = text && std::find(axis.values.begin(), axis.values.end(), *text) != axis.values.end();
          if (repeated) error(v->loc, "value " + *text + " is listed twice for " + quoted(name));
          if (text && !repeated) axis.values.push_back(*text);
          else ok = false;
        }
        out.push_back(std::move(axis));
        continue;
      }
      ok = false;
    }
    return ok;
  }

  std::vector<TuneConfigSig> expand(const ast::Expr &list) {
    std::vector<TuneConfigSig> out;
    std::vector<size_t> element;  // parallel to out: the element it came from
    if (list.kind != ast::ExprKind::List) {
      error(list.loc, "configs: takes a list of config(...) and product(...)");
      return out;
    }
    if (list.args.empty()) error(list.loc, "configs: is empty: give at least one config(...) or product(...)");
    bool ok = true;
    for (size_t e = 0; e < list.args.size(); ++e) {
      const ast::Expr &el = *list.args[e];
      std::vector<Axis> ax;
      if (el.kind != ast::ExprKind::Call || (el.text != "config" && el.text != "product")) {
        error(el.loc, "an element of configs: is config(NAME: value, ...) or product(NAME: [value, ...], ...)");
        ok = false;
        continue;
      }
      if (!axes(el, ax)) {
        ok = false;
        continue;
      }
      size_t count = 1;
      for (const Axis &a : ax) count = std::min(count * a.values.size(), kMaxTuneConfigs + 1);
      if (out.size() + count > kMaxTuneConfigs) {
        error(el.loc, "the @tune space has more than " + std::to_string(kMaxTuneConfigs) + " configs");
        return {};
      }
      // An odometer over the axes: the last one turns fastest.
      std::vector<size_t> at(ax.size(), 0);
      for (size_t n = 0; n < count; ++n) {
        TuneConfigSig c;
        c.loc = el.loc;
        for (size_t i = 0; i < ax.size(); ++i) {
          const std::string &v = ax[i].values[at[i]];
          if (ax[i].name == "num_warps") c.numWarps = std::stoi(v);
          else if (ax[i].name == "num_stages") c.numStages = std::stoi(v);
          else {
            c.consts[ax[i].name] = v;
            c.order.push_back(ax[i].name);
          }
        }
        out.push_back(std::move(c));
        element.push_back(e);
        for (size_t i = ax.size(); i-- > 0;) {
          if (++at[i] < ax[i].values.size()) break;
          at[i] = 0;
        }
      }
    }
    if (ok) checkSpecialisations(out, element);
    return out;
  }

  // "BLOCK: 256, num_warps: 4, num_stages: 3", consts in parameter order.
  std::string describe(const std::map<std::string, std::string> &consts, const TuneConfigSig &c) const {
    std::string s;
    for (const ast::Param &p : d_.params) {
      auto it = consts.find(p.name);
      if (it != consts.end()) s += p.name + ": " + it->second + ", ";
    }
    return s + "num_warps: " + std::to_string(c.numWarps) + ", num_stages: " + std::to_string(c.numStages);
  }

  // Every config must specialise (its values feed the other consts'
  // defaults), and two configs may not give the same specialisation.
  // Reported once per config(...) or product(...), not once per point.
  void checkSpecialisations(const std::vector<TuneConfigSig> &configs, const std::vector<size_t> &element) {
    std::map<std::string, size_t> first;  // the full values -> the config that has them first
    std::set<size_t> reported;
    for (size_t i = 0; i < configs.size(); ++i) {
      if (reported.count(element[i])) continue;
      const TuneConfigSig &c = configs[i];
      std::vector<ConstBinding> consts;
      if (!specialiseConsts(d_, c.consts, diags_, file_, fns_, consts)) {
        diags_.note(c.loc, "while specialising the @tune config (" + describe(c.consts, c) + ")");
        reported.insert(element[i]);
        continue;
      }
      std::map<std::string, std::string> all;
      for (const ConstBinding &b : consts) all[b.name] = bindingText(b);
      std::string full = describe(all, c);
      auto [it, fresh] = first.emplace(full, i);
      if (fresh) continue;
      error(c.loc, "duplicate @tune config (" + full + ")");
      diags_.note(configs[it->second].loc, "it is first given here");
      reported.insert(element[i]);
    }
  }

  std::vector<std::string> keyNames(const ast::Expr &list) {
    std::vector<std::string> names;
    if (list.kind != ast::ExprKind::List) {
      error(list.loc, "key: takes a list of argument names, as in key: [n]");
      return names;
    }
    for (const ast::ExprPtr &e : list.args) {
      const ast::Param *p = e->kind == ast::ExprKind::Name ? param(e->text) : nullptr;
      if (e->kind != ast::ExprKind::Name) error(e->loc, "key: takes argument names, as in key: [n]");
      else if (!p) error(e->loc, lang::quoted(e->text) + " in key: is not a parameter of kernel " + quoted(d_.name));
      else if (p->isConst)
        error(e->loc, lang::quoted(e->text) + " in key: is a const parameter: key: names run-time arguments (the configs set the consts)");
      else if (p->type.ptrDepth)
        error(e->loc, lang::quoted(e->text) + " in key: is a pointer: key: names integer, float or bool arguments");
      else if (std::find(names.begin(), names.end(), e->text) != names.end())
        error(e->loc, lang::quoted(e->text) + " is in key: twice");
      else names.push_back(e->text);
    }
    return names;
  }

  // Strings, types and values of a type const's type are not host values.
  static std::optional<HostValue::Kind> hostKind(const ast::Param &p) {
    auto kind = IRGen::scalarKind(p.type.name);
    if (!kind) return std::nullopt;
    ir::ScalarKind k = *kind;
    if (k == ir::ScalarKind::I1) return HostValue::Kind::Bool;
    return ir::isFloat(k) ? HostValue::Kind::Float : HostValue::Kind::Int;
  }

  // The prune predicate sees the consts, num_warps, num_stages and the key
  // arguments: what is known when the tuner picks configs for a key.
  std::string pruneText(const ast::Expr &e, const std::vector<std::string> &key) {
    auto kindOf = [&](const std::string &n) -> std::optional<HostValue::Kind> {
      if (n == "num_warps" || n == "num_stages") return HostValue::Kind::Int;
      const ast::Param *p = param(n);
      if (!p || (!p->isConst && std::find(key.begin(), key.end(), n) == key.end())) return std::nullopt;
      return hostKind(*p);
    };
    bool namesOk = true;
    std::function<void(const ast::Expr &)> walk = [&](const ast::Expr &x) {
      if (x.kind == ast::ExprKind::Name && !kindOf(x.text)) {
        error(x.loc, quoted(x.text) + " in prune: is not a const parameter, num_warps, num_stages or a key argument");
        namesOk = false;
      }
      for (const ast::ExprPtr &a : x.args) walk(*a);
    };
    walk(e);
    if (!namesOk) return "";
    auto host = HostExpr::fromAst(e);
    try {
      HostValue::Kind k = host->check(kindOf);
      if (k != HostValue::Kind::Bool)
        error(e.loc, std::string("prune: must be a bool condition (the configs where it is true are skipped), not ") +
                         HostValue::kindName(k));
    } catch (const HostExprError &err) {
      error(err.loc().known() ? err.loc() : e.loc, std::string("in prune: ") + err.what());
    }
    return host->str();
  }

  const ast::Decl &d_;
  DiagnosticEngine &diags_;
  const std::string &file_;
  const FnTable *fns_;
};
}  // namespace

// Attributes: only @tune exists, on kernels, once each.
void checkAttributes(const ast::Module &m, DiagnosticEngine &diags) {
  for (const ast::Decl &d : m.decls) {
    const ast::Attribute *tune = nullptr;
    for (const ast::Attribute &a : d.attributes) {
      const std::string &name = a.call->text;
      if (name != "tune") {
        diags.error(a.loc, "unknown attribute '@" + (name.size() > 40 ? name.substr(0, 40) + "...'" : name + "'") +
                               " (tk knows @tune)");
      } else if (d.kind != ast::DeclKind::Kernel) {
        diags.error(a.loc, std::string("@tune applies to a kernel, not to ") +
                               (d.kind == ast::DeclKind::Fn ? "a fn" : "an import"));
      } else if (tune) {
        diags.error(a.loc, "a kernel takes one @tune");
        diags.note(tune->loc, "the first @tune is here");
      } else {
        tune = &a;
      }
    }
  }
}

std::optional<TuneSig> checkTune(const ast::Decl &d, const ast::Attribute &a, DiagnosticEngine &diags,
                                 const std::string &file, const FnTable *fns) {
  return TuneChecker(d, diags, file, fns).run(a);
}

}  // namespace tk::lang
