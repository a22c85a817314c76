/**
 * "No `any` reaches a host": loads the installed package's entry points with
 * the TypeScript compiler as a host's editor would, and walks every export's
 * type (properties, call signatures, parameters, results, type arguments,
 * union members) through the package's own declarations. An `any` found on
 * the way, written or inferred (a dependency without types turns into
 * `any` silently), is reported with its path. Types declared by other
 * packages (oidc-provider's, Koa's) are their authors' and are not entered.
 */
import { join, sep } from 'node:path';

import ts from 'typescript';

const MAX_DEPTH = 8;

export function anyInExports(packageDir: string, entries: string[]): string[] {
  const files = entries.map((e) => join(packageDir, e));
  const program = ts.createProgram(files, {
    strict: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2023, noEmit: true, skipLibCheck: false, types: ['node'],
  });
  const checker = program.getTypeChecker();
  const ours = (decl: ts.Declaration) => decl.getSourceFile().fileName.startsWith(`${packageDir}${sep}`) || decl.getSourceFile().fileName.startsWith(`${packageDir}/`);
  const found: string[] = [];
  const seen = new Set<ts.Type>();

  const visitSignature = (sig: ts.Signature, path: string, depth: number) => {
    for (const param of sig.getParameters()) {
      visitType(checker.getTypeOfSymbol(param), `${path}(${param.getName()})`, depth + 1);
    }
    visitType(sig.getReturnType(), `${path}()→`, depth + 1);
  };

  function visitType(type: ts.Type, path: string, depth: number): void {
    if (type.flags & ts.TypeFlags.Any) {
      found.push(path);
      return;
    }
    if (depth > MAX_DEPTH || seen.has(type)) return;
    seen.add(type);
    if (type.isUnionOrIntersection()) {
      type.types.forEach((t, i) => visitType(t, `${path}|${i}`, depth + 1));
      return;
    }
    const args = checker.getTypeArguments(type as ts.TypeReference);
    if ((type.flags & ts.TypeFlags.Object) && (type as ts.ObjectType).objectFlags & ts.ObjectFlags.Reference) {
      args.forEach((t, i) => visitType(t, `${path}<${i}>`, depth + 1));
    }
    const declarations = (type.aliasSymbol ?? type.getSymbol())?.getDeclarations() ?? [];
    // Another package's type (Provider, Koa's context, Promise itself): not entered.
    if (declarations.length > 0 && !declarations.some(ours)) return;
    for (const sig of [...type.getCallSignatures(), ...type.getConstructSignatures()]) visitSignature(sig, path, depth);
    for (const prop of type.getProperties()) {
      // A class's `#private` fields: declared as a bare `#private;`, out of a host's reach.
      if (prop.getName().startsWith('#')) continue;
      const decl = prop.valueDeclaration ?? prop.declarations?.[0];
      if (decl && !ours(decl)) continue;
      visitType(checker.getTypeOfSymbol(prop), `${path}.${prop.getName()}`, depth + 1);
    }
  }

  for (const file of files) {
    const source = program.getSourceFile(file);
    if (!source) throw new Error(`cannot load ${file}`);
    const module = checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`${file} is not a module`);
    for (const symbol of checker.getExportsOfModule(module)) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      const name = `${file.slice(packageDir.length + 1)}:${symbol.getName()}`;
      if (target.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias)) {
        visitType(checker.getDeclaredTypeOfSymbol(target), name, 0);
      } else {
        visitType(checker.getTypeOfSymbol(target), name, 0);
      }
    }
  }
  return found;
}
