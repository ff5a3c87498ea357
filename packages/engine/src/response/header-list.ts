/**
 * Headers as the flat list `writeHead` takes (`[name, value, ...]`), to
 * which the writer adds its own (`Content-Type`, `Content-Length`).
 *
 * @example res.writeHead(200, [...headerList({ Location: '/v1/pets/3' }), 'Content-Length', '0']);
 */
export function headerList(headers: Readonly<Record<string, string>> | undefined): string[] {
  const list: string[] = [];
  if (headers) for (const name in headers) list.push(name, headers[name]!);
  return list;
}
