import { Controller, Get, HttpCode, HttpStatus, Param, Post, Req, Res, UploadedFile, UseInterceptors } from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import { ApiBody, ApiConsumes, ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { ApiResult } from '../../kernel/api-result.js';
import type { Request, Response } from 'express';
import { Authenticated, Public, USER_ONLY, USER_OR_API_KEY } from '../../kernel/policy.js';
import { Ctx, type RequestContext } from '../../kernel/request-context.js';
import { MultipartTenancyInterceptor } from '../tenancy/multipart-tenancy.interceptor.js';
import { BucketService } from './bucket.service.js';

export class UploadResponse {
  @ApiProperty({ enum: ['OK'] }) status: 'OK';
  @ApiProperty() accessKey: string;
  @ApiProperty({ format: 'uri', description: 'Where the avatar is served; accepted as `avatar` by the user routes.' }) url: string;
}

// The stored image, in its own type.
const IMAGE = { schema: { type: 'string', format: 'binary' } };

@ApiTags('bucket')
@Controller('auth-api/bucket/userAvatars')
export class BucketController {
  constructor(private readonly bucket: BucketService) {}

  @Post('upload')
  @Authenticated({ principals: USER_OR_API_KEY, permission: null, bucketToken: true })
  @HttpCode(HttpStatus.CREATED)
  @UseInterceptors(FileInterceptor('file'), MultipartTenancyInterceptor)
  @ApiConsumes('multipart/form-data')
  @ApiBody({ schema: { type: 'object', properties: { file: { type: 'string', format: 'binary' } } } })
  @ApiOperation({ summary: 'Upload an avatar (PNG, JPEG, WebP, GIF) with an access token or the userBucketToken. Beyond avatarUploadsPerUser files, your oldest file other than your current avatar is deleted.' })
  @ApiResult(UploadResponse)
  async upload(@Ctx() ctx: RequestContext, @UploadedFile() file: Express.Multer.File | undefined, @Req() req: Request) {
    // req.protocol honours TRUST_PROXY (X-Forwarded-Proto behind a load balancer).
    const { accessKey, url } = await this.bucket.uploadAvatar(ctx.session!, file?.buffer, `${req.protocol}://${req.get('host')}`);
    return { status: 'OK', accessKey, url };
  }

  @Get('download/key/:accessKey')
  @Public()
  @ApiOperation({ summary: 'Download an avatar by its access key.' })
  @ApiOkResponse({ description: 'The image.', content: { 'image/png': IMAGE, 'image/jpeg': IMAGE, 'image/webp': IMAGE, 'image/gif': IMAGE } })
  async download(@Param('accessKey') accessKey: string, @Res() res: Response): Promise<void> {
    const object = await this.bucket.downloadAvatar(accessKey);
    res
      .set({
        'Content-Type': object.contentType,
        'Content-Length': String(object.data.length),
        'X-Content-Type-Options': 'nosniff',
        'Content-Security-Policy': "default-src 'none'",
        // Access keys are never reused, so the content never changes.
        'Cache-Control': 'public, max-age=31536000, immutable',
      })
      .end(object.data);
  }
}
