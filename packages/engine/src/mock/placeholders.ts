/**
 * The smallest valid body of common binary media types, for mocks of
 * operations that answer with files: a client that checks what it got (an
 * image decoder, a PDF reader) accepts them. Other types get a few bytes.
 */
const PLACEHOLDERS: Readonly<Record<string, string>> = {
  // 1×1 transparent PNG.
  'image/png': 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  // 1×1 GIF.
  'image/gif': 'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7',
  // 1×1 baseline JPEG.
  'image/jpeg':
    '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP////////////////////////////////////////////' +
    '//////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=',
  // One empty 1×1 pt page.
  'application/pdf': Buffer.from(
    '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n' +
      '3 0 obj<</Type/Page/MediaBox[0 0 1 1]/Parent 2 0 R>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n',
  ).toString('base64'),
  // An empty ZIP archive (its end-of-central-directory record alone).
  'application/zip': Buffer.from([0x50, 0x4b, 0x05, 0x06, ...new Array(18).fill(0)]).toString('base64'),
};

/** @example placeholderFor('image/png').subarray(1, 4).toString() // 'PNG' */
export function placeholderFor(mediaType: string): Buffer {
  const known = PLACEHOLDERS[mediaType === 'image/jpg' ? 'image/jpeg' : mediaType];
  return known ? Buffer.from(known, 'base64') : Buffer.from('placeholder bytes of the mock\n', 'utf8');
}
